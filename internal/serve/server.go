package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/telemetry"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// Options configure a Server. The zero value of each field means its
// default.
type Options struct {
	// Listen is the address the command listens on (for messages only:
	// the Server itself is an http.Handler).
	Listen string
	// Auth finds each request's principal (Handler puts
	// identity.Middleware in front of MCPHandler); nil means every request
	// is the one local principal (loopback only).
	Auth identity.Authenticator
	// ResourceURL is this gateway's /mcp URL as clients name it: the
	// resource of the RFC 9728 metadata, whose URL a 401's challenge names.
	ResourceURL string
	// MaxRequestBytes bounds one HTTP request body (see Handler).
	MaxRequestBytes int64
	// MaxResultBytes bounds one upstream answer, a tool result among them:
	// a larger one is a tool error that says so. Default
	// upstream.DefaultMaxResultBytes.
	MaxResultBytes int
	// RatePerSecond and RateBurst limit each principal's calls (Handler).
	RatePerSecond float64
	RateBurst     int
	// SessionSecret keys the sealed session ids (and nothing else). Every
	// replica behind one load balancer needs the same secret; nil draws a
	// random one, so ids live as long as the process.
	SessionSecret []byte
	// IdleSessionTTL ends a 2025-era session idle this long (default 1 h);
	// a session id older than 24 h is refused whatever its activity.
	IdleSessionTTL time.Duration
	// ApprovalTimeout bounds how long an elicitation (2025-era client) may
	// stay unanswered; default channel.DefaultTimeout.
	ApprovalTimeout time.Duration
	// StateTTL is how long a 2026-07-28 request state may wait for its
	// retry; default channel.StateTTL (10 minutes).
	StateTTL time.Duration
	// Version is announced as serverInfo.version.
	Version string
	// SpecsOf turns a reloaded config into the upstream specs (the
	// command's reading of [mcp_servers.*]); nil: Reload changes policy
	// only.
	SpecsOf func(*config.Config) ([]serverspec.Spec, error)
	// Telemetry gets a SERVER span per request, a CLIENT span per
	// upstream call and the decisions; nil (or disabled) records nothing.
	Telemetry *telemetry.Telemetry
	// Logger gets diagnostics; nil discards them.
	Logger *slog.Logger
	// Store, when set, keeps the 2026-07-28 request states (keyed by
	// SessionSecret, so every replica redeems every other's, once); the
	// host's grants and session state are in it too when the command
	// built the host with host.Settings.WithStore. nil: this process only.
	Store *store.Store
}

// Defaults the zero Options stand for.
const (
	DefaultIdleSessionTTL = time.Hour
	// MaxSessionAge is how long a sealed session id is accepted at all.
	MaxSessionAge = 24 * time.Hour
)

// Server is toolwarden serve's MCP side: one streamable HTTP endpoint in
// front of every configured upstream, shared by every caller.
type Server struct {
	h      *host.Host
	opts   Options
	log    *slog.Logger
	signer *channel.Signer
	seal   *sessionSeal

	ups     []*upstream.Client // swapped whole under mu (see upstreams)
	baseCtx context.Context    // Start's, under mu

	mcp  *server.MCPServer
	http *server.StreamableHTTPServer

	mu     sync.RWMutex
	routes map[string]*route // by downstream tool name

	rebuildMu sync.Mutex

	startOnce sync.Once
	started   chan struct{} // closed once every upstream was tried once

	callsMu  sync.Mutex
	inflight sync.WaitGroup
	closing  bool

	digestMu sync.Mutex
	digestOf *config.Config
	digest   string // policyDigest of digestOf

	legacy        sync.Map // sealed session id -> host session id
	initialised   sync.Map // sealed session id -> struct{}: 2025-era sessions started here (replicas.go)
	conversations sync.Map // 2026-07-28 host session id -> *atomic.Int64 (last use, unix ns)
	now           func() time.Time
	contexts      sync.Map // upstream name -> *policy.ServerContext
}

// New builds a Server over the upstreams in specs. Nothing starts until
// Start; MCPHandler may serve at once (tools appear as upstreams start).
func New(h *host.Host, specs []serverspec.Spec, opts Options) *Server {
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = upstream.DefaultMaxResultBytes
	}
	if opts.IdleSessionTTL <= 0 {
		opts.IdleSessionTTL = DefaultIdleSessionTTL
	}
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = channel.DefaultTimeout
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.StateTTL <= 0 {
		opts.StateTTL = channel.StateTTL
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{
		h:       h,
		opts:    opts,
		log:     log,
		signer:  requestStates(opts, log),
		seal:    newSessionSeal(opts.SessionSecret, MaxSessionAge),
		routes:  map[string]*route{},
		started: make(chan struct{}),
	}
	s.seal.onEnd = s.sessionEnded
	for _, sp := range specs {
		s.ups = append(s.ups, s.newUpstream(sp))
	}
	hooks := &server.Hooks{}
	hooks.AddAfterListTools(s.filterList)
	hooks.AddAfterInitialize(s.sessionInitialised)
	s.mcp = server.NewMCPServer("toolwarden", opts.Version,
		server.WithToolCapabilities(true),
		server.WithRecovery(),
		server.WithHooks(hooks),
	)
	// Before the first rebuild too: a call may come before Start ends.
	s.mcp.AddTool(s.unstartedServerTool().Tool, s.callUnstarted)
	s.http = server.NewStreamableHTTPServer(s.mcp,
		server.WithEndpointPath("/mcp"),
		server.WithSessionIdManagerResolver(s.seal),
		server.WithSessionIdleTTL(opts.IdleSessionTTL),
		server.WithStreamableHTTPLogger(log),
		// The gateway is meant to be reached by name or address from
		// other machines; who may call is identity's job, not the Host
		// header's.
		server.WithDisableLocalhostProtection(true),
	)
	return s
}

// newUpstream is the client of one upstream server, not started.
func (s *Server) newUpstream(sp serverspec.Spec) *upstream.Client {
	if sp.Logger == nil {
		sp.Logger = s.log
	}
	u := upstream.New(sp, s.opts.Version, s.upstreamChanged)
	u.SetMaxResultBytes(s.opts.MaxResultBytes)
	return u
}

// runCtx is the context Start was given: background retries end with it.
func (s *Server) runCtx() context.Context {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.baseCtx == nil {
		return context.Background()
	}
	return s.baseCtx
}

// Start starts every upstream (stdio servers run, HTTP ones connected),
// each within its startup timeout, and returns once each was tried. One
// that fails is logged and retried in the background; Ready says whether
// all are up. Start runs once; later calls return nil at once.
func (s *Server) Start(ctx context.Context) error {
	var errs []error
	s.startOnce.Do(func() {
		s.mu.Lock()
		s.baseCtx = ctx
		s.mu.Unlock()
		go s.sweepEvery(ctx)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, u := range s.upstreams() {
			wg.Go(func() {
				if err := u.Start(ctx); err != nil {
					s.log.Error("upstream did not start; retrying in the background", "server", u.Name(), "err", err)
					mu.Lock()
					errs = append(errs, fmt.Errorf("server %s: %w", u.Name(), err))
					mu.Unlock()
					go s.keepTrying(ctx, u)
				}
			})
		}
		wg.Wait()
		s.rebuild()
		close(s.started)
	})
	return errors.Join(errs...)
}

// keepTrying restarts u with its backoff until it comes up or is closed.
func (s *Server) keepTrying(ctx context.Context, u *upstream.Client) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(max(u.RetryIn(), 100*time.Millisecond)):
		}
		err := u.Start(ctx)
		if err == nil {
			s.log.Info("upstream started", "server", u.Name())
			return
		}
		if errors.Is(err, upstream.ErrClosed) {
			return
		}
	}
}

// Ready is nil when Start has run and every upstream is started, else an
// error that names the ones that are not.
func (s *Server) Ready() error {
	select {
	case <-s.started:
	default:
		return errors.New("the upstream servers are starting")
	}
	var errs []error
	for _, u := range s.upstreams() {
		if err := u.Err(); err != nil {
			errs = append(errs, fmt.Errorf("server %s: %w", u.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// MCPHandler serves MCP (streamable HTTP, both protocol eras) at /mcp. It
// expects identity.Middleware in front of it (Handler); a request that
// reaches it without a principal is refused with 401 when Options.Auth is
// set, and is the local principal when it is not.
func (s *Server) MCPHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := identity.FromContext(r.Context()); !ok {
			if s.opts.Auth != nil {
				http.Error(w, "toolwarden serve: the request carries no authenticated principal", http.StatusUnauthorized)
				return
			}
			r = r.WithContext(identity.WithPrincipal(r.Context(), identity.Principal{Name: "local", Via: "loopback"}))
		}
		if r.Method == http.MethodGet && !s.ownStream(r) {
			http.Error(w, "Invalid session ID", http.StatusNotFound)
			return
		}
		s.traceRequest(w, r, s.redirectUnstarted(s.http))
	})
}

// ownStream reports whether a GET may open the stream it names: mcp-go
// checks the session id of a POST and a DELETE, but opens a GET stream for
// whatever id it is given, and that stream carries the session's
// notifications and the requests (elicitations) sent to it. A GET without
// an id gets a stream of its own, as mcp-go gives it.
func (s *Server) ownStream(r *http.Request) bool {
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		return true
	}
	p, _ := identity.FromContext(r.Context())
	return s.seal.verify(sid, p.Name) == nil && !s.seal.isTerminated(sid)
}

// Close stops taking calls, waits (until ctx ends) for the calls in
// flight to be answered, then stops the upstreams.
func (s *Server) Close(ctx context.Context) error {
	s.callsMu.Lock()
	s.closing = true
	s.callsMu.Unlock()
	done := make(chan struct{})
	go func() { s.inflight.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("calls still in flight at shutdown: %w", ctx.Err())
	}
	var wg sync.WaitGroup
	for _, u := range s.upstreams() {
		wg.Go(func() { _ = u.Close() })
	}
	wg.Wait()
	return err
}

// admit counts a call in flight, unless the Server is closing.
func (s *Server) admit() bool {
	s.callsMu.Lock()
	defer s.callsMu.Unlock()
	if s.closing {
		return false
	}
	s.inflight.Add(1)
	return true
}

// upstreamChanged runs when an upstream's tool list changed.
func (s *Server) upstreamChanged(*upstream.Client) { s.rebuild() }

// sessionEnded forgets the host session a terminated 2025-era session
// keyed (its "session" approvals, pins and labels).
func (s *Server) sessionEnded(id string) {
	s.initialised.Delete(id)
	if hs, ok := s.legacy.LoadAndDelete(id); ok {
		s.h.EndSession(hs.(string))
	}
}

// elicitationParams is the ask as mcp-go sends it.
func elicitationRequest(p mcp.ElicitationParams) mcp.ElicitationRequest {
	return mcp.ElicitationRequest{Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)}, Params: p}
}
