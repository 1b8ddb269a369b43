package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/rawjson"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// Errors a Call can return besides *RPCError.
var (
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("upstream client closed")
	// ErrTimeout: the call ran past the tool timeout.
	ErrTimeout = errors.New("tool call timed out")
)

// RPCError is a JSON-RPC error the upstream answered with.
type RPCError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("upstream error %d: %s", e.Code, e.Message)
}

// TransportError is a failure to reach the upstream or to get its answer:
// the process exited, the pipe broke, the HTTP request failed. The request
// may or may not have run. The connection is dropped and the next use
// reconnects (with backoff).
type TransportError struct {
	Server string
	Err    error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("upstream %s: %v", e.Server, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// UnavailableError says the upstream is down and when it will be tried again.
type UnavailableError struct {
	Server  string
	Cause   error
	RetryIn time.Duration
}

func (e *UnavailableError) Error() string {
	if e.RetryIn > 0 {
		return fmt.Sprintf("upstream %s is unavailable (%v); toolwarden retries starting it in %s", e.Server, e.Cause, e.RetryIn.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("upstream %s is unavailable: %v", e.Server, e.Cause)
}

func (e *UnavailableError) Unwrap() error { return e.Cause }

// IsTransport reports whether err means the request may not have reached
// the upstream or its answer was lost: the only failures an idempotent tool
// call may be retried after.
func IsTransport(err error) bool {
	var te *TransportError
	return errors.As(err, &te)
}

// Client is one upstream MCP server, reached through mcp-go. It starts the
// server on first use, keeps its tool list (raw definitions, parsed once),
// relists on notifications/tools/list_changed, and restarts a server that
// died, with exponential backoff. It is safe for concurrent use.
//
// mcp-go's client runs the handshake. Requests go through the transport
// raw: tools/list so that tool definitions reach the client byte for byte
// (mcp.Tool drops schema keywords and unknown annotations), tools/call so
// that the result is relayed as the upstream wrote it and mcp-go's multi
// round-trip loop never runs on a client that has no one to ask. A stdio
// server's transport is toolwarden's own (see stdioTransport), on which a
// tools/call is one line written and one line routed back by id (Begin):
// no decoding of the result, no goroutine hand-off, no timer.
type Client struct {
	spec     serverspec.Spec
	onChange func(*Client)
	onNotify NotifyFunc

	// Relaying the server's requests and log messages to a client of ours
	// (see serverreq.go).
	onServerRequest ServerRequestFunc
	clientCaps      mcp.ClientCapabilities // guarded by mu
	logLevel        mcp.LoggingLevel       // guarded by mu; "" until set

	// progress: the calls in flight that carry a progressToken, by token
	// (see BeginWithProgress), and where their progress goes.
	progressMu sync.Mutex
	progress   map[string]*Pending
	onProgress func(line []byte)
	version    string
	log        *slog.Logger

	mu         sync.Mutex
	conn       *conn
	connecting chan struct{}
	tools      []*host.Tool
	listed     bool // tools holds a real listing
	failures   int
	retryAt    time.Time
	lastErr    error
	closed     bool
	subs       map[string]struct{} // resource URIs subscribed (see Subscribe)

	// live mirrors conn, for calls to read without the lock; failing is
	// set while failures is not 0.
	live    atomic.Pointer[conn]
	failing atomic.Bool

	refreshMu  sync.Mutex
	refreshing bool
	dirty      bool

	ids       atomic.Uint64
	deadlines deadlines

	// maxResult bounds one message from a stdio server (see
	// SetMaxResultBytes); 0 is DefaultMaxResultBytes.
	maxResult int
}

type conn struct {
	mc           *client.Client
	tr           transport.Interface
	st           *stdioTransport // a stdio server's (tools/call skips mcp-go); nil over HTTP
	cancel       context.CancelFunc
	dead         atomic.Bool
	instructions string
	serverInfo   mcp.Implementation
	caps         mcp.ServerCapabilities
	closeOnce    sync.Once
}

func (cn *conn) close() {
	cn.closeOnce.Do(func() {
		cn.dead.Store(true)
		_ = cn.mc.Close()
		cn.cancel()
	})
}

// New returns a client for spec. Nothing starts until Start or the first
// Call. onChange, if not nil, is called whenever the tool list changes
// (after a start, a restart or a relist); it may be called concurrently and
// should return quickly.
func New(spec serverspec.Spec, version string, onChange func(*Client)) *Client {
	log := spec.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Client{spec: spec, onChange: onChange, version: version, log: log, deadlines: deadlines{tick: 50 * time.Millisecond}}
}

// NotifyFunc receives a notification an upstream server sent on its own:
// its method and its params as JSON (nil when it had none). See OnNotify.
type NotifyFunc func(c *Client, method string, params json.RawMessage)

// OnNotify sets f to receive the server's notifications/prompts/list_changed,
// notifications/resources/list_changed, notifications/resources/updated and
// its log messages (notifications/message).
// Each time the server (re)connects, f also gets the two list_changed
// notifications for the capabilities it declares: a server that came up
// late or was restarted may list other prompts and resources than before.
// Set it before the client starts. f runs on the connection's reader, so
// it must return quickly.
func (c *Client) OnNotify(f NotifyFunc) { c.onNotify = f }

// SetMaxResultBytes bounds one message from a stdio server to n bytes (0:
// DefaultMaxResultBytes): a larger answer is discarded as it is read, and
// the request it answers gets a *TooLargeError. Set it before the client
// starts. (An HTTP server's answers are read by mcp-go, unbounded.)
func (c *Client) SetMaxResultBytes(n int) { c.maxResult = n }

// Name is the server's name.
func (c *Client) Name() string { return c.spec.Name }

// Spec is how the client reaches its server.
func (c *Client) Spec() serverspec.Spec { return c.spec }

// Start connects and lists tools, within the startup timeout.
func (c *Client) Start(ctx context.Context) error {
	_, err := c.ready(ctx)
	return err
}

// Tools returns the current tool list. The slice is shared: do not modify.
func (c *Client) Tools() []*host.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools
}

// Instructions is the server's initialize instructions, if it is connected.
func (c *Client) Instructions() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return ""
	}
	return c.conn.instructions
}

// ServerInfo is the serverInfo of the server's initialize result (its
// name, version, title...), if it is connected.
func (c *Client) ServerInfo() (info mcp.Implementation, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return mcp.Implementation{}, false
	}
	return c.conn.serverInfo, true
}

// Capabilities are the server capabilities of the server's initialize
// result. ok is false while it is not connected (not started yet, or down).
func (c *Client) Capabilities() (caps mcp.ServerCapabilities, ok bool) {
	cn := c.live.Load()
	if cn == nil || cn.dead.Load() {
		return mcp.ServerCapabilities{}, false
	}
	return cn.caps, true
}

// RetryIn says how long until a down server is tried again (0: now, or up).
func (c *Client) RetryIn() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil && !c.conn.dead.Load() {
		return 0
	}
	return max(0, time.Until(c.retryAt))
}

// Err is the last start or transport failure, or nil while the server is up.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil && !c.conn.dead.Load() {
		return nil
	}
	return c.lastErr
}

// Close stops the server (or the HTTP session).
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	cn := c.conn
	c.conn = nil
	c.live.Store(nil)
	c.mu.Unlock()
	if cn != nil {
		cn.close()
	}
	return nil
}

// backoff is the wait before restart number n (n failures in a row): the
// first restart is immediate, so one crash costs one call; then 1 s, 2 s,
// 4 s ... up to 30 s.
func backoff(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	d := time.Second << min(n-2, 5)
	return min(d, 30*time.Second)
}

// ready returns a live connection, connecting (or reconnecting) if needed.
// Concurrent callers share one connection attempt.
func (c *Client) ready(ctx context.Context) (*conn, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, ErrClosed
		}
		if cn := c.conn; cn != nil && !cn.dead.Load() {
			c.mu.Unlock()
			return cn, nil
		}
		if wait := c.connecting; wait != nil {
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if d := time.Until(c.retryAt); d > 0 && c.lastErr != nil {
			err := &UnavailableError{Server: c.spec.Name, Cause: c.lastErr, RetryIn: d}
			c.mu.Unlock()
			return nil, err
		}
		done := make(chan struct{})
		c.connecting = done
		old := c.conn
		c.conn = nil
		c.live.Store(nil)
		c.mu.Unlock()

		if old != nil {
			go old.close() // reap the dead process without holding up the restart
		}
		cn, tools, err := c.dial()

		c.mu.Lock()
		c.connecting = nil
		close(done)
		if err != nil {
			c.failures++
			c.failing.Store(true)
			c.lastErr = err
			c.retryAt = time.Now().Add(max(backoff(c.failures+1), time.Second))
			c.mu.Unlock()
			c.log.Warn("upstream failed to start", "server", c.spec.Name, "err", err)
			return nil, &UnavailableError{Server: c.spec.Name, Cause: err}
		}
		if c.closed {
			c.mu.Unlock()
			cn.close()
			return nil, ErrClosed
		}
		c.conn = cn
		c.live.Store(cn)
		c.lastErr = nil
		changed := !c.listed || !sameTools(c.tools, tools)
		c.tools, c.listed = tools, true
		resubscribe := len(c.subs) > 0
		c.mu.Unlock()
		if changed {
			c.changed()
		}
		if resubscribe {
			go c.resubscribe(cn)
		}
		c.connected(cn)
		go c.restoreLogLevel(cn)
		return cn, nil
	}
}

// dial starts the server, runs the handshake and lists its tools, all
// within the startup timeout.
func (c *Client) dial() (*conn, []*host.Tool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.spec.StartupTimeoutOrDefault())
	defer cancel()

	var tr transport.Interface
	var httpTr *transport.StreamableHTTP
	declared := c.declaredCapabilities()
	if c.spec.URL != "" {
		h, err := transport.NewStreamableHTTP(c.spec.URL,
			transport.WithHTTPHeaders(c.spec.Headers),
			transport.WithHTTPLogger(c.log),
			transport.WithHTTPBasicClient(pooledHTTP()))
		if err != nil {
			return nil, nil, err
		}
		tr, httpTr = h, h
	}
	cn := &conn{}
	if tr == nil {
		cmd, tail := c.command(c.spec.Command, c.spec.Args)
		if err := notFound(cmd, c.spec.Command); err != nil {
			return nil, nil, err // at once: no process to wait for
		}
		cn.st = newStdioTransport(cmd, c.log, func(err error) { c.lost(cn, err) })
		cn.st.tail = tail
		cn.st.name, cn.st.maxLine = c.spec.Name, c.maxResult
		cn.st.onProgress = c.progressLine
		if f := c.onServerRequest; f != nil {
			cn.st.declared = declared
			cn.st.onServerRequest = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *RPCError) {
				return f(ctx, c, method, params)
			}
		}
		tr = cn.st
	}
	// The connection outlives the startup timeout: mcp-go keeps this context
	// for the listener and for requests the server sends us.
	life, stop := context.WithCancel(context.Background())
	// Pin the newest handshake-based revision: no server/discover probe (up
	// to 5 s against servers that ignore it), and raw requests need no
	// per-request _meta. Every 2026-07-28 server still serves it.
	mc := client.NewClient(tr, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	cn.mc, cn.tr, cn.cancel = mc, tr, stop
	if err := mc.Start(life); err != nil {
		stop()
		return nil, nil, fmt.Errorf("starting %s: %w", c.spec.Describe(), err)
	}
	getHandler := transport.RequestHandler(pingOnly)
	if httpTr != nil && c.onServerRequest != nil {
		// In place of mcp-go's handler, which decodes each request into
		// its types and declares whatever has a handler.
		getHandler = c.httpServerRequest(declared)
		httpTr.SetRequestHandler(getHandler)
	}
	mc.OnNotification(func(n mcp.JSONRPCNotification) { c.notification(cn, n) })
	res, err := mc.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION,
		ClientInfo:      mcp.Implementation{Name: "toolwarden", Version: c.version},
		Capabilities:    declared,
	}})
	if err != nil {
		err = c.startErr("initialize", ctx, cn, err)
		cn.close()
		return nil, nil, err
	}
	cn.instructions = res.Instructions
	cn.serverInfo = res.ServerInfo
	cn.caps = res.Capabilities
	if httpTr != nil {
		g := &getStream{c: c, cn: cn, tr: httpTr, version: mc.ProtocolVersion(), handle: getHandler, http: &http.Client{}}
		go g.listen(life) // see getstream.go
	}
	tools, err := c.list(ctx, cn)
	if err != nil {
		err = c.startErr("tools/list", ctx, cn, err)
		cn.close()
		return nil, nil, err
	}
	return cn, tools, nil
}

// startErr says why what (the handshake or the first list) failed: the
// server's exit, when its process ended (see ExitedError), else the
// timeout or the error itself.
// notification handles what a server sends on its own, from mcp-go's
// client or from the GET stream (see getstream.go).
func (c *Client) notification(cn *conn, n mcp.JSONRPCNotification) {
	if cn.dead.Load() {
		return
	}
	switch n.Method {
	case string(mcp.MethodNotificationToolsListChanged):
		go c.Refresh()
	case string(mcp.MethodNotificationProgress):
		// A stdio server's progress never gets here (the transport
		// routes it); an HTTP server's does, decoded by mcp-go.
		if b, err := json.Marshal(n); err == nil {
			c.progressLine(b)
		}
	case mcp.MethodNotificationPromptsListChanged, mcp.MethodNotificationResourcesListChanged, mcp.MethodNotificationResourceUpdated, string(mcp.MethodNotificationMessage):
		c.notify(n.Method, n.Params)
	}
}

func (c *Client) startErr(what string, ctx context.Context, cn *conn, err error) error {
	if exited := c.exitedErr(cn.st); exited != nil {
		return exited
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: no answer within the startup timeout (%s; raise startup_timeout_sec)", what, c.spec.StartupTimeoutOrDefault())
	}
	return fmt.Errorf("%s: %w", what, err)
}

// command builds the server's process. It is not bound to any context:
// mcp-go would kill the process when the context ends, and the startup
// timeout's context ends as soon as the server is up. Its stderr goes to
// Spec.Stderr and, its end, to tail (for ExitedError). cmd.Err is set when
// the command cannot be found.
func (c *Client) command(command string, args []string) (*exec.Cmd, *stderrTail) {
	cmd := exec.Command(command, args...)
	cmd.Env = c.spec.Env
	cmd.Dir = c.spec.Dir
	tail := &stderrTail{}
	cmd.Stderr = teeWriter{tail, c.spec.Stderr}
	// A grandchild that keeps the stderr pipe open must not keep Wait
	// from reporting the server's exit.
	cmd.WaitDelay = gracefulShutdown
	return cmd, tail
}

// send issues one raw request. IDs are strings ("tw-N") so they can never
// collide with the numeric IDs mcp-go's own client uses on the same
// transport.
func (c *Client) send(ctx context.Context, cn *conn, method string, params any) (json.RawMessage, error) {
	id := mcp.NewRequestId(callID(c.ids.Add(1)))
	resp, err := cn.tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: params})
	if err != nil {
		var tl *TooLargeError
		if errors.As(err, &tl) {
			return nil, err // the connection is fine: only this answer was dropped
		}
		if ctx.Err() != nil {
			cause := context.Cause(ctx)
			c.cancelRequest(cn, id, cause)
			if errors.Is(cause, context.DeadlineExceeded) {
				return nil, ErrTimeout
			}
			return nil, ctx.Err()
		}
		c.lost(cn, err)
		return nil, &TransportError{Server: c.spec.Name, Err: err}
	}
	if resp.Error != nil {
		return nil, &RPCError{Code: resp.Error.Code, Message: resp.Error.Message, Data: rawData(resp.Error.Data)}
	}
	if len(resp.Result) == 0 {
		return nil, &RPCError{Code: mcp.INTERNAL_ERROR, Message: "response has neither result nor error"}
	}
	return resp.Result, nil
}

func rawData(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// cancelRequest tells the server to stop work we no longer wait for.
func (c *Client) cancelRequest(cn *conn, id mcp.RequestId, reason error) {
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": reason.Error()}},
		},
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = cn.tr.SendNotification(ctx, n)
	}()
}

// lost marks a connection dead after a transport failure.
func (c *Client) lost(cn *conn, err error) {
	if cn.dead.Swap(true) {
		return
	}
	c.mu.Lock()
	c.failures++
	c.failing.Store(true)
	c.lastErr = err
	c.retryAt = time.Now().Add(backoff(c.failures))
	c.mu.Unlock()
	c.log.Warn("upstream connection lost", "server", c.spec.Name, "err", err)
	go cn.close()
}

type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"` // metaObject
}

// Call runs tools/call for the tool the server calls name, within the tool
// timeout, and returns the result object exactly as the server wrote it.
// Errors are *RPCError (the server said no), *TransportError (it died or
// the connection broke), *UnavailableError (it is down), ErrTimeout, or the
// context's error.
func (c *Client) Call(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	return c.call(ctx, name, args, "")
}

// call is Call for a call whose client asked for progress with the raw
// token progress ("" when it did not): see BeginWithProgress.
func (c *Client) call(ctx context.Context, name string, args json.RawMessage, progress string) (json.RawMessage, error) {
	cn, err := c.ready(ctx)
	if err != nil {
		return nil, err
	}
	if cn.st != nil {
		return c.callStdio(ctx, cn, name, args, progress)
	}
	params := callParams{Name: name, Arguments: args, Meta: metaObject(progress, metaFrom(ctx))}
	if progress != "" {
		// The server's progress arrives through mcp-go's notification
		// handler (see dial) while the call is watched.
		pd := &Pending{c: c, progress: progress}
		c.watchProgress(pd)
		defer c.unwatchProgress(pd)
	}
	ctx, release := c.deadlines.watch(ctx, c.spec.ToolTimeoutOrDefault())
	defer release()
	res, err := c.send(ctx, cn, string(mcp.MethodToolsCall), params)
	if err == nil {
		c.succeeded()
	}
	return res, err
}

// succeeded resets the restart backoff after a call that worked.
func (c *Client) succeeded() {
	if !c.failing.Load() {
		return
	}
	c.mu.Lock()
	c.failures = 0
	c.failing.Store(false)
	c.mu.Unlock()
}

type callResult struct {
	raw json.RawMessage
	err error
}

// resultChan is a Receiver that hands the outcome to a waiting Call.
type resultChan chan callResult

func (ch resultChan) Receive(raw json.RawMessage, err error) {
	ch <- callResult{append(json.RawMessage(nil), raw...), err}
}

// callStdio is Call on a stdio connection: Begin's path, waited for.
func (c *Client) callStdio(ctx context.Context, cn *conn, name string, args json.RawMessage, progress string) (json.RawMessage, error) {
	ch := make(resultChan, 1)
	pd := &Pending{c: c, done: ch, progress: progress, meta: metaFrom(ctx)}
	pd.start(cn, name, args)
	select {
	case r := <-ch:
		return r.raw, r.err
	case <-ctx.Done():
		pd.Cancel()
		r := <-ch
		if r.err == context.Canceled {
			r.err = ctx.Err()
		}
		return r.raw, r.err
	}
}

// A Receiver gets the outcome of a call started with Begin: what Call
// would return. A result from a stdio server is a view of the
// connection's read buffer, valid until Receive returns: copy what you
// keep (relaying it as it came costs no copy).
type Receiver interface {
	Receive(result json.RawMessage, err error)
}

// ReceiverFunc is a func as a Receiver.
type ReceiverFunc func(result json.RawMessage, err error)

// Receive calls f.
func (f ReceiverFunc) Receive(result json.RawMessage, err error) { f(result, err) }

// Pending is a tools/call in flight, started by Begin.
type Pending struct {
	c     *Client
	done  Receiver
	fired atomic.Bool

	// On a live stdio connection: the request's id and when it times out
	// (the connection's watcher ends it then).
	cn *conn
	id uint64
	at time.Time

	// Otherwise (starting the server first, or HTTP): stops the goroutine
	// that makes the call.
	stop context.CancelFunc

	// progress is the client's progressToken, passed on upstream; the
	// server's notifications/progress for it are relayed (see OnProgress).
	progress string
	// meta is more _meta members, encoded (WithMeta).
	meta string
}

// Begin starts tools/call for the tool the server calls name, within the
// tool timeout, and returns at once; done receives what Call would return,
// exactly once. On a live stdio connection the request is written before
// Begin returns and done runs on the connection's reader (or on the
// timeout watcher's goroutine, or in Cancel), so it must not block for
// long and must not wait for another call. Otherwise (the server is
// starting or restarting, or is reached over HTTP) the call runs on a
// goroutine of its own. done may run before Begin returns.
func (c *Client) Begin(name string, args json.RawMessage, done Receiver) *Pending {
	return c.BeginWithProgress(name, args, nil, done)
}

// BeginWithProgress is Begin for a call whose client asked for progress
// with progressToken (raw JSON: a string or an integer). The token goes to
// the server in the request's _meta, and the server's
// notifications/progress carrying it are handed to the OnProgress
// function until the call ends: as the server wrote them from a stdio
// server, re-encoded by mcp-go from an HTTP one. A call that waits for its
// server to (re)start carries its token too.
func (c *Client) BeginWithProgress(name string, args, progressToken json.RawMessage, done Receiver) *Pending {
	pd := &Pending{c: c, done: done}
	progress := ""
	if k := rawjson.Kind(progressToken); k == '"' || k == '0' {
		progress = string(progressToken)
	}
	if cn := c.live.Load(); cn != nil && cn.st != nil && !cn.dead.Load() {
		pd.progress = progress
		pd.start(cn, name, args)
		return pd
	}
	ctx, stop := context.WithCancel(context.Background())
	pd.stop = stop
	go func() {
		defer stop()
		raw, err := c.call(ctx, name, args, progress)
		pd.finish(raw, err)
	}()
	return pd
}

// start writes the request on a stdio connection.
func (pd *Pending) start(cn *conn, name string, args json.RawMessage) {
	c := pd.c
	if len(args) > 0 && !rawjson.Valid(args) {
		pd.finish(nil, errors.New("the arguments are not valid JSON"))
		return
	}
	pd.cn = cn
	pd.id = c.ids.Add(1)
	pd.at = time.Now().Add(c.spec.ToolTimeoutOrDefault())
	if pd.progress != "" {
		c.watchProgress(pd)
	}
	bp := linePool.Get().(*[]byte)
	line := appendCallLine((*bp)[:0], pd.id, name, args, pd.progress, pd.meta)
	err := cn.st.sendCall(pd, line) // which keeps nothing of line
	if cap(line) <= maxPooledLine {
		*bp = line
		linePool.Put(bp)
	}
	if err != nil {
		c.lost(cn, err)
		pd.finish(nil, &TransportError{Server: c.spec.Name, Err: err})
	}
}

// answer implements waiter: the server's answer, or the connection's end.
func (pd *Pending) answer(_, result, rpcErr []byte, err error) {
	c := pd.c
	var tl *TooLargeError
	switch {
	case errors.As(err, &tl):
		pd.finish(nil, err) // the connection is fine: only this answer was dropped
	case err != nil:
		c.lost(pd.cn, err)
		pd.finish(nil, &TransportError{Server: c.spec.Name, Err: err})
	case rpcErr != nil:
		pd.finish(nil, parseRPCError(rpcErr))
	case len(result) == 0:
		pd.finish(nil, &RPCError{Code: mcp.INTERNAL_ERROR, Message: "response has neither result nor error"})
	default:
		c.succeeded()
		pd.finish(result, nil) // a view: see Receiver
	}
}

func parseRPCError(raw []byte) *RPCError {
	var e struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return &RPCError{Code: mcp.INTERNAL_ERROR, Message: "the server answered with a malformed error: " + string(raw)}
	}
	if string(e.Data) == "null" {
		e.Data = nil
	}
	return &RPCError{Code: e.Code, Message: e.Message, Data: e.Data}
}

func (pd *Pending) finish(raw json.RawMessage, err error) {
	if pd.fired.Swap(true) {
		return
	}
	if pd.progress != "" {
		pd.c.unwatchProgress(pd)
	}
	pd.done.Receive(raw, err)
}

// timedOut ends a call that ran past the tool timeout (the watcher took
// it off the connection).
func (pd *Pending) timedOut() {
	pd.cancelUpstream(errDeadline)
	pd.finish(nil, ErrTimeout)
}

// Cancel abandons the call: done gets context.Canceled (unless the answer
// came first) and the server is sent notifications/cancelled.
func (pd *Pending) Cancel() {
	if pd.stop != nil {
		pd.stop()
		return
	}
	if pd.cn == nil || !pd.cn.st.forgetCall(pd.id) {
		return
	}
	pd.cancelUpstream(context.Canceled)
	pd.finish(nil, context.Canceled)
}

// cancelUpstream tells the server to stop work we no longer wait for.
func (pd *Pending) cancelUpstream(reason error) {
	b, err := json.Marshal(mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": callID(pd.id), "reason": reason.Error()}},
		},
	})
	if err == nil {
		pd.cn.st.notify(append(b, '\n'))
	}
}

// callIDPrefix starts the ids of our own requests ("tw-1", "tw-2"...):
// strings, so they never collide with the numbers mcp-go's client uses on
// the same connection.
const callIDPrefix = "tw-"

func callID(id uint64) string { return callIDPrefix + strconv.FormatUint(id, 10) }

// linePool holds buffers for request lines.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledLine = 64 << 10

// appendCallLine appends a tools/call request as one line.
func appendCallLine(b []byte, id uint64, name string, args json.RawMessage, progressToken, meta string) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":"`+callIDPrefix...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `","method":"tools/call","params":{"name":`...)
	b = appendString(b, name)
	if progressToken != "" || meta != "" {
		b = append(b, `,"_meta":`...)
		b = appendMeta(b, progressToken, meta)
	}
	if len(args) > 0 {
		b = append(b, `,"arguments":`...)
		b = append(b, oneLine(args)...)
	}
	return append(b, "}}\n"...)
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// ToolTimeout is the per-call timeout.
func (c *Client) ToolTimeout() time.Duration { return c.spec.ToolTimeoutOrDefault() }

type listPage struct {
	Tools      []json.RawMessage `json:"tools"`
	NextCursor string            `json:"nextCursor"`
}

// list reads every page of tools/list and parses each definition once.
func (c *Client) list(ctx context.Context, cn *conn) ([]*host.Tool, error) {
	var tools []*host.Tool
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page > 1000 {
			return nil, errors.New("tools/list: more than 1000 pages")
		}
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		raw, err := c.send(ctx, cn, string(mcp.MethodToolsList), params)
		if err != nil {
			return nil, err
		}
		var p listPage
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		for _, r := range p.Tools {
			t, err := host.ParseTool(r)
			if err != nil {
				c.log.Warn("upstream tool skipped", "server", c.spec.Name, "err", err)
				continue
			}
			if seen[t.Name] {
				c.log.Warn("upstream lists a tool twice; keeping the first", "server", c.spec.Name, "tool", t.Name)
				continue
			}
			seen[t.Name] = true
			tools = append(tools, t)
		}
		if p.NextCursor == "" || p.NextCursor == cursor {
			return tools, nil
		}
		cursor = p.NextCursor
	}
}

// Refresh relists the tools (after notifications/tools/list_changed).
// Overlapping refreshes coalesce: one more runs after the current one.
func (c *Client) Refresh() {
	c.refreshMu.Lock()
	if c.refreshing {
		c.dirty = true
		c.refreshMu.Unlock()
		return
	}
	c.refreshing = true
	c.refreshMu.Unlock()
	for {
		c.refreshOnce()
		c.refreshMu.Lock()
		if !c.dirty {
			c.refreshing = false
			c.refreshMu.Unlock()
			return
		}
		c.dirty = false
		c.refreshMu.Unlock()
	}
}

func (c *Client) refreshOnce() {
	c.mu.Lock()
	cn := c.conn
	c.mu.Unlock()
	if cn == nil || cn.dead.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.spec.StartupTimeoutOrDefault())
	defer cancel()
	tools, err := c.list(ctx, cn)
	if err != nil {
		c.log.Warn("upstream relist failed", "server", c.spec.Name, "err", err)
		return
	}
	c.mu.Lock()
	if c.conn != cn {
		c.mu.Unlock()
		return
	}
	changed := !sameTools(c.tools, tools)
	c.tools = tools
	c.mu.Unlock()
	if changed {
		c.changed()
	}
}

// changed tells the owner the tool list changed.
func (c *Client) changed() {
	if c.onChange != nil {
		c.onChange(c)
	}
}

func sameTools(a, b []*host.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].HashHex != b[i].HashHex || string(a[i].Raw) != string(b[i].Raw) {
			return false
		}
	}
	return true
}
