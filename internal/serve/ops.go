package serve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Front is serve's HTTP side as a process runs it: the http.Server with
// its bounds on slow and large clients, and the graceful shutdown that
// stops taking work, lets the calls in flight finish within a grace
// period, cancels what is left, then closes the upstreams.
type Front struct {
	srv   *http.Server
	o     FrontOptions
	log   *slog.Logger
	close func(context.Context) error // stops the upstreams, after the last call

	draining atomic.Bool
	inflight atomic.Int64 // requests being served, listening streams aside

	// streams ends the listening streams (a GET, subscriptions/listen) the
	// moment shutdown begins: they never finish on their own.
	streams    context.Context
	endStreams context.CancelCauseFunc
	// calls is every request's base context: cancelled when the grace
	// period ends, with ErrGraceEnded as the cause.
	calls    context.Context
	endCalls context.CancelCauseFunc

	mu sync.Mutex
	ln net.Listener
}

// FrontOptions are the bounds of the HTTP server. Zero values take the
// defaults named beside each field.
type FrontOptions struct {
	// ReadTimeout bounds the time a client has to send a request's
	// headers, and again its body (DefaultReadTimeout). Nothing bounds a
	// response's writing: a call's answer may wait minutes for a human.
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection left unused (DefaultIdleTimeout).
	IdleTimeout time.Duration
	// WriteStall bounds how long one write of an answer may make no
	// progress (DefaultWriteStall): a client that stops reading is cut
	// off. Waiting with nothing to write is not bounded.
	WriteStall time.Duration
	// MaxHeaderBytes bounds a request's headers (DefaultMaxHeaderBytes); over it, 431.
	MaxHeaderBytes int
	// Grace is how long shutdown waits for the calls in flight (DefaultGrace).
	Grace  time.Duration
	Logger *slog.Logger
}

// DefaultIdleTimeout closes keep-alive connections idle this long.
const DefaultIdleTimeout = 2 * time.Minute

// DefaultWriteStall is how long a write may wait for a client that does
// not read.
const DefaultWriteStall = 30 * time.Second

// DefaultGrace is how long a shutdown waits for the calls in flight.
const DefaultGrace = 30 * time.Second

// cancelWait is how long, after the grace period, the cancelled calls
// have to write their errors before their connections are cut.
const cancelWait = 5 * time.Second

// ErrGraceEnded is the cause of the calls a shutdown cancels.
var ErrGraceEnded = errors.New("toolwarden serve is shutting down and this call did not finish within the shutdown grace period; it was cancelled (retry it; the grace period is serve's --shutdown-grace)")

func (o FrontOptions) withDefaults() FrontOptions {
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.WriteStall <= 0 {
		o.WriteStall = DefaultWriteStall
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Front returns s's HTTP side with the bounds of o; Serve starts it.
func (s *Server) Front(o FrontOptions) *Front {
	f := newFront(s.Close, o)
	f.srv.Handler = s.handler(f.o.ReadTimeout, f)
	return f
}

// newFront makes a Front whose handler the caller sets (its chain runs
// f.gate after limitBody); closeUpstreams runs last in Shutdown.
func newFront(closeUpstreams func(context.Context) error, o FrontOptions) *Front {
	o = o.withDefaults()
	f := &Front{o: o, log: o.Logger, close: closeUpstreams}
	f.streams, f.endStreams = context.WithCancelCause(context.Background())
	f.calls, f.endCalls = context.WithCancelCause(context.Background())
	f.srv = &http.Server{
		// The header deadline; limitBody sets the body's, and lifts it
		// once the body is in. There is no WriteTimeout: it would cut a
		// call's SSE stream while a human decides (a test holds this).
		ReadHeaderTimeout: o.ReadTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return f.calls },
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
	}
	return f
}

// Serve accepts connections on ln until Shutdown; it returns nil then.
func (f *Front) Serve(ln net.Listener) error {
	f.mu.Lock()
	f.ln = ln
	f.mu.Unlock()
	err := f.srv.Serve(ln)
	if f.draining.Load() {
		return nil
	}
	return err
}

// isStream reports whether r opens a listening stream: a legacy GET on
// the endpoint, or a 2026-07-28 subscriptions/listen.
func isStream(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == "/mcp" ||
		r.Method == http.MethodPost && r.Header.Get(mcp.HeaderMethod) == "subscriptions/listen"
}

// gate counts the requests in flight, ends listening streams when shutdown
// begins, and once it has begun refuses new work (a JSON-RPC request)
// while letting answers and notifications reach the calls still running.
// It runs after limitBody, which has read the body it classifies. A nil
// Front (Handler without Front) gates nothing.
func (f *Front) gate(next http.Handler) http.Handler {
	if f == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isStream(r) {
			f.serveStream(next, w, r)
			return
		}
		f.inflight.Add(1)
		defer f.inflight.Add(-1)
		if f.draining.Load() {
			w.Header().Set("Connection", "close")
			if b := bodyOf(r); b == nil || b.msg.request {
				f.refuseDraining(w, r)
				return
			}
		}
		b := bodyOf(r)
		if b == nil || !b.msg.request {
			next.ServeHTTP(w, r)
			return
		}
		tw := &answerWriter{ResponseWriter: w, stall: f.o.WriteStall}
		next.ServeHTTP(tw, r)
		if errors.Is(context.Cause(r.Context()), ErrGraceEnded) {
			tw.answerCancelled(b.msg.id)
		}
	})
}

// isDraining reports whether shutdown has begun (false for a nil Front).
func (f *Front) isDraining() bool { return f != nil && f.draining.Load() }

func (f *Front) serveStream(next http.Handler, w http.ResponseWriter, r *http.Request) {
	if f.draining.Load() {
		f.refuseDraining(w, r)
		return
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	stop := context.AfterFunc(f.streams, func() { cancel(context.Cause(f.streams)) })
	defer stop()
	next.ServeHTTP(&answerWriter{ResponseWriter: w, stall: f.o.WriteStall}, r.WithContext(ctx))
}

func (f *Front) refuseDraining(w http.ResponseWriter, r *http.Request) {
	var id []byte
	if b := bodyOf(r); b != nil {
		id = b.msg.id
	}
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", "1")
	writeRPCError(w, http.StatusServiceUnavailable, id, mcp.INTERNAL_ERROR,
		"toolwarden: serve is shutting down and takes no new requests; retry (behind a load balancer the retry reaches another replica)")
}

// Shutdown stops accepting connections, ends listening streams, waits up
// to the grace period for the requests in flight (answers to their asks
// still reach them), cancels the rest with ErrGraceEnded, then closes the
// connections and the upstreams. A done ctx (a second signal) ends the
// grace period at once.
func (f *Front) Shutdown(ctx context.Context) error {
	f.draining.Store(true)
	f.mu.Lock()
	if f.ln != nil {
		_ = f.ln.Close() // new connections are refused from here on
	}
	f.mu.Unlock()
	f.endStreams(errors.New("toolwarden serve is shutting down"))
	n := f.inflight.Load()
	f.log.Info("shutting down: no new connections; waiting for the requests in flight", "in_flight", n, "grace", f.o.Grace)
	if !f.await(ctx, f.o.Grace) {
		f.log.Warn("shutdown grace period ended; cancelling the requests still in flight", "in_flight", f.inflight.Load(), "grace", f.o.Grace)
		f.endCalls(ErrGraceEnded)
		f.await(context.Background(), cancelWait)
	}
	cctx, cancel := context.WithTimeout(context.Background(), cancelWait)
	defer cancel()
	if err := f.srv.Shutdown(cctx); err != nil {
		_ = f.srv.Close()
	}
	var err error
	if f.close != nil {
		err = f.close(cctx)
	}
	f.log.Info("shut down")
	return err
}

// await polls until no request is in flight (true), or limit passes or
// ctx is done (false).
func (f *Front) await(ctx context.Context, limit time.Duration) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for f.inflight.Load() > 0 {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

// Addr is the address Serve accepts on, once it has been called.
func (f *Front) Addr() net.Addr {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ln == nil {
		return nil
	}
	return f.ln.Addr()
}
