package proxy

import (
	"io"
	"log/slog"
	"time"

	"github.com/toolwarden/toolwarden/internal/catalog"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// Options configure a Proxy. Start from Defaults and chain With... calls;
// each returns a new value.
type Options struct {
	name, version    string
	upstreamInfo     bool // see WithUpstreamServerInfo
	namespace        bool
	maxArgs          int
	maxResult        int
	approvalTimeout  time.Duration
	askProgress      time.Duration // see WithAskProgressEvery
	stateTTL         time.Duration
	sessionID        string
	log              *slog.Logger
	waitForUpstreams bool
	workers          int
	catalog          *catalog.Writer // see WithCatalog
}

// Default limits.
const (
	// DefaultMaxArgumentBytes caps a tools/call's arguments (1 MiB).
	DefaultMaxArgumentBytes = 1 << 20
	// DefaultMaxResultBytes caps one message from a stdio upstream, a
	// tool result among them (32 MiB).
	DefaultMaxResultBytes = upstream.DefaultMaxResultBytes
)

// Defaults: tools keep their upstream names, 1 MiB argument cap, 32 MiB
// result cap, channel.DefaultTimeout (50 s) to answer an ask, progress
// every 10 s while one waits, channel.StateTTL (10 minutes) for request
// states, a random session ID, no logging.
func Defaults() Options {
	return Options{
		name:            "toolwarden",
		version:         "dev",
		maxArgs:         DefaultMaxArgumentBytes,
		maxResult:       DefaultMaxResultBytes,
		approvalTimeout: channel.DefaultTimeout,
		askProgress:     DefaultAskProgressEvery,
		stateTTL:        channel.StateTTL,
		log:             slog.New(slog.NewTextHandler(io.Discard, nil)),
		workers:         16,
	}
}

// WithServerInfo sets the name and version the proxy announces downstream.
func (o Options) WithServerInfo(name, version string) Options {
	o.name, o.version = name, version
	return o
}

// WithUpstreamServerInfo makes a proxy in front of one server (no
// namespace) announce that server's serverInfo (name, version, title,
// description, website) instead of its own, as it passes its instructions
// on: the client shows the server the user configured, not toolwarden.
// The upstream must be started before Run answers initialize
// (WithWaitForUpstreams), else the proxy's own info is used.
func (o Options) WithUpstreamServerInfo(on bool) Options { o.upstreamInfo = on; return o }

// WithNamespace exposes every tool as <server>__<tool> (proxy mode), so that
// several upstreams can share one tool list without collisions.
func (o Options) WithNamespace(on bool) Options { o.namespace = on; return o }

// WithMaxArgumentBytes caps the size of a call's arguments; larger calls
// get a tool error and never reach policy or the upstream.
func (o Options) WithMaxArgumentBytes(n int) Options { o.maxArgs = n; return o }

// WithMaxResultBytes caps the size of one message from a stdio upstream,
// its answer to a tool call among them. A larger answer is discarded as
// it is read, never held whole, and the call gets a tool error that says
// so; the proxy keeps serving. n <= 0 means DefaultMaxResultBytes.
func (o Options) WithMaxResultBytes(n int) Options { o.maxResult = n; return o }

// WithApprovalTimeout bounds how long a client that uses server-initiated
// elicitation (protocol 2025-11-25 and earlier) may take to answer an
// approval prompt, and how long an ask waits in the approval inbox
// (approval_channel "inbox" or "both"). No answer in time is a deny.
func (o Options) WithApprovalTimeout(d time.Duration) Options { o.approvalTimeout = d; return o }

// DefaultAskProgressEvery is how often a call waiting for an answer tells
// the client it is still alive: under the shortest timeout a client that
// resets it on progress is likely to use (the TypeScript SDK's
// resetTimeoutOnProgress with its 60 s default, or less).
const DefaultAskProgressEvery = 10 * time.Second

// WithAskProgressEvery sets how often a tools/call that carries
// _meta.progressToken gets notifications/progress for that token while it
// waits for the human's answer; d <= 0 sends none.
func (o Options) WithAskProgressEvery(d time.Duration) Options { o.askProgress = d; return o }

// WithStateTTL sets how long a minted approval request state stays valid
// (multi round-trip clients answer by retrying the call within this time).
func (o Options) WithStateTTL(d time.Duration) Options { o.stateTTL = d; return o }

// WithSessionID names the proxy's one session (stdio serves one client).
// The default is random.
func (o Options) WithSessionID(id string) Options { o.sessionID = id; return o }

// WithLogger sends the proxy's diagnostics (upstream starts, crashes,
// restarts) to l.
func (o Options) WithLogger(l *slog.Logger) Options { o.log = l; return o }

// WithWaitForUpstreams makes Run start every upstream (each within its
// startup timeout) before it reads its first message, so the first answer
// already carries the upstream's instructions. If one cannot start, Run
// answers the client's initialize with a JSON-RPC error that says why and
// returns a *StartupError (see startup.go). Without it Run serves at
// once, tools/list waits for the upstreams instead, and an upstream that
// cannot start is retried while the others serve.
func (o Options) WithWaitForUpstreams(on bool) Options { o.waitForUpstreams = on; return o }

// WithWorkers sets how many long-lived goroutines serve the calls that wait
// for a human (an ask, or its answer); when all are busy, such a call gets
// a goroutine of its own. Calls that need no human take none: they are
// decided as they are read and relayed as the upstream answers.
func (o Options) WithWorkers(n int) Options { o.workers = n; return o }
