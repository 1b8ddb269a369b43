package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/sdk/approval"
	"github.com/toolwarden/toolwarden/sdk/upstream"
)

// Separator joins server and tool names in proxy mode: <server>__<tool>.
const Separator = "__"

// Proxy is an MCP server (on mcp-go) in front of one or more upstream MCP
// servers. Every tools/list is filtered and every tools/call decided by the
// host; asks go to the client as elicitations. A Proxy serves one client
// (one session) and runs once. mcp-go keeps one stdio client session per
// process, so run at most one Proxy at a time in a process.
type Proxy struct {
	h       *host.Host
	opts    Options
	session string
	signer  *approval.Signer
	ups     []*upstream.Client
	log     *slog.Logger

	mu      sync.RWMutex
	routes  map[string]*route // by downstream tool name
	srv     *server.MCPServer
	sessCtx context.Context // carries mcp-go's stdio client session

	out      *output
	runCtx   context.Context
	work     chan job // to idle workers
	calls    sync.WaitGroup
	callsMu  sync.Mutex
	inflight map[string]context.CancelFunc // by request id

	rebuildMu sync.Mutex
	started   chan struct{} // closed once every upstream was tried once
}

// route is one downstream tool: which upstream serves it, under which name,
// and its current definition.
type route struct {
	name string // as the client knows it
	up   *upstream.Client
	tool *host.Tool
	raw  json.RawMessage // the definition the client sees (renamed in proxy mode)
}

// New builds a proxy over the given upstreams. Nothing starts until Run.
func New(h *host.Host, specs []upstream.Spec, opts Options) *Proxy {
	p := &Proxy{
		h:        h,
		opts:     opts,
		session:  opts.sessionID,
		signer:   approval.NewSigner(opts.stateTTL, 1024),
		log:      opts.log,
		routes:   map[string]*route{},
		started:  make(chan struct{}),
		inflight: map[string]context.CancelFunc{},
		work:     make(chan job),
	}
	if p.session == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		p.session = "stdio-" + hex.EncodeToString(b[:])
	}
	for _, s := range specs {
		if s.Logger == nil {
			s.Logger = p.log
		}
		p.ups = append(p.ups, upstream.New(s, opts.version, p.upstreamChanged))
	}
	return p
}

// Session is the ID of the proxy's session, as policy and the audit log
// see it.
func (p *Proxy) Session() string { return p.session }

// Upstreams are the proxy's upstream clients, in order.
func (p *Proxy) Upstreams() []*upstream.Client { return p.ups }

// Run starts the upstreams and serves one MCP client over stdio (newline
// delimited JSON-RPC on in and out) until in ends or ctx is done. Then it
// stops the upstreams and ends the session.
func (p *Proxy) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer p.shutdown()
	p.runCtx = ctx

	go p.startAll(ctx)
	if p.opts.waitForUpstreams {
		select {
		case <-p.started:
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	opts := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithRecovery(),
	}
	if !p.opts.namespace && len(p.ups) == 1 {
		if ins := p.ups[0].Instructions(); ins != "" {
			opts = append(opts, server.WithInstructions(ins))
		}
	}
	srv := server.NewMCPServer(p.opts.name, p.opts.version, opts...)
	p.mu.Lock()
	p.srv = srv
	p.mu.Unlock()
	p.rebuild()

	if pin := pollableReader(in); pin != in {
		in = pin
		defer pin.(io.Closer).Close()
	}
	if pout := pollableWriter(out); pout != out {
		out = pout
		defer pout.(io.Closer).Close()
	}
	p.out = newOutput(out, p)
	for range max(p.opts.workers, 1) {
		go p.worker(ctx)
	}
	// Our own reader serves tools/call and hands everything else to mcp-go
	// through a pipe (see intake).
	pr, pw := io.Pipe()
	r := newIntake(in, p.out, p)
	go r.pump(pw)
	stdio := server.NewStdioServer(srv)
	stdio.SetErrorLogger(log.New(slogWriter{p.log}, "", 0))
	stdio.SetContextFunc(func(ctx context.Context) context.Context {
		p.mu.Lock()
		p.sessCtx = ctx
		p.mu.Unlock()
		return ctx
	})
	err := stdio.Listen(ctx, pr, p.out)
	pr.Close()
	// The client is gone: stop what it was waiting for.
	cancel()
	p.calls.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// job is one tools/call to serve.
type job struct {
	ctx    context.Context
	cancel context.CancelFunc
	key    string
	req    *callRequest
}

// maxInFlight bounds concurrent calls; past it a call gets a tool error.
const maxInFlight = 256

// dispatch serves a tools/call on an idle worker (long-lived goroutines,
// whose stacks have already grown to what a call needs), or on a goroutine
// of its own when every worker is busy, for instance waiting for a human.
// notifications/cancelled for its id cancels it.
func (p *Proxy) dispatch(req *callRequest) {
	ctx, cancel := context.WithCancel(p.runCtx)
	j := job{ctx: ctx, cancel: cancel, key: string(req.ID), req: req}
	p.callsMu.Lock()
	n := len(p.inflight)
	if n < maxInFlight {
		p.inflight[j.key] = cancel
	}
	p.callsMu.Unlock()
	if n >= maxInFlight {
		cancel()
		p.respond(req, made(toolError("toolwarden: more than %d calls are in flight; try %s again later.", maxInFlight, req.Name)))
		return
	}
	p.calls.Add(1)
	select {
	case p.work <- j:
	default:
		go p.runJob(j)
	}
}

func (p *Proxy) worker(ctx context.Context) {
	for {
		select {
		case j := <-p.work:
			p.runJob(j)
		case <-ctx.Done():
			return
		}
	}
}

func (p *Proxy) runJob(j job) {
	defer p.calls.Done()
	defer func() {
		p.callsMu.Lock()
		delete(p.inflight, j.key)
		p.callsMu.Unlock()
		j.cancel()
	}()
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("panic serving a tool call", "tool", j.req.Name, "panic", r)
			p.respond(j.req, made(toolError("toolwarden: internal error serving %s: %v", j.req.Name, r)))
		}
	}()
	p.serve(j.ctx, j.req)
}

// cancelCall cancels an in-flight call (notifications/cancelled).
func (p *Proxy) cancelCall(id json.RawMessage) {
	key := string(id)
	p.callsMu.Lock()
	cancel := p.inflight[key]
	p.callsMu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// startAll starts every upstream at once; one that fails keeps being
// retried in the background (with its backoff) until it comes up, and its
// tools then appear with notifications/tools/list_changed.
func (p *Proxy) startAll(ctx context.Context) {
	var wg sync.WaitGroup
	for _, u := range p.ups {
		wg.Go(func() {
			if err := u.Start(ctx); err != nil {
				p.log.Error("upstream did not start", "server", u.Name(), "cmd", u.Spec().Describe(), "err", err)
				go p.keepTrying(ctx, u)
			}
		})
	}
	wg.Wait()
	close(p.started)
}

func (p *Proxy) keepTrying(ctx context.Context, u *upstream.Client) {
	for {
		wait := max(u.RetryIn(), 100*time.Millisecond)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if err := u.Start(ctx); err == nil {
			p.log.Info("upstream started", "server", u.Name())
			return
		} else if errors.Is(err, upstream.ErrClosed) {
			return
		}
	}
}

func (p *Proxy) shutdown() {
	var wg sync.WaitGroup
	for _, u := range p.ups {
		wg.Go(func() { _ = u.Close() })
	}
	wg.Wait()
	p.h.EndSession(p.session)
}

// upstreamChanged runs when an upstream's tool list changed.
func (p *Proxy) upstreamChanged(*upstream.Client) { p.rebuild() }

// stubSchema is what mcp-go holds for each tool. mcp-go only routes calls;
// tools/list answers are rewritten with the upstream's own definitions (see
// output), so nothing from upstream is parsed by mcp-go, which panics on
// some schemas and drops others' keywords.
var stubSchema = json.RawMessage(`{"type":"object"}`)

// rebuild recomputes the routes from the upstreams' current tool lists
// and re-registers them with mcp-go, which tells the client the list
// changed.
func (p *Proxy) rebuild() {
	p.rebuildMu.Lock()
	defer p.rebuildMu.Unlock()
	routes := map[string]*route{}
	var tools []server.ServerTool
	for _, u := range p.ups {
		for _, t := range u.Tools() {
			rt := p.newRoute(u, t)
			if _, dup := routes[rt.name]; dup {
				p.log.Warn("two tools share one name; keeping the first", "tool", rt.name, "server", u.Name())
				continue
			}
			routes[rt.name] = rt
			tools = append(tools, server.ServerTool{
				Tool:    mcp.Tool{Name: rt.name, RawInputSchema: stubSchema},
				Handler: p.callTool,
			})
		}
	}
	p.mu.Lock()
	p.routes = routes
	srv := p.srv
	p.mu.Unlock()
	if srv != nil {
		srv.SetTools(tools...)
	}
}

func (p *Proxy) newRoute(u *upstream.Client, t *host.Tool) *route {
	rt := &route{name: t.Name, up: u, tool: t, raw: t.Raw}
	if p.opts.namespace {
		rt.name = u.Name() + Separator + t.Name
		if raw, err := renameTool(t.Raw, rt.name); err == nil {
			rt.raw = raw
		}
	}
	return rt
}

func (p *Proxy) route(name string) *route {
	p.mu.RLock()
	rt := p.routes[name]
	p.mu.RUnlock()
	return rt
}

// visibleTools renders the tools/list array for the session: each
// upstream's tools in the upstream's order, filtered by the host (the
// visibility gate and plugins' list event), each definition byte for byte
// as the upstream sent it (renamed in proxy mode).
func (p *Proxy) visibleTools(ctx context.Context) json.RawMessage {
	p.mu.RLock()
	routes := p.routes
	p.mu.RUnlock()
	var buf bytes.Buffer
	buf.WriteByte('[')
	n := 0
	for _, u := range p.ups {
		for _, t := range p.h.Filter(ctx, p.session, u.Name(), u.Tools()) {
			raw := t.Raw
			name := t.Name
			if p.opts.namespace {
				name = u.Name() + Separator + t.Name
			}
			if rt := routes[name]; rt != nil && rt.tool == t {
				raw = rt.raw
			} else if p.opts.namespace {
				raw = p.newRoute(u, t).raw
			}
			if n > 0 {
				buf.WriteByte(',')
			}
			buf.Write(raw)
			n++
		}
	}
	buf.WriteByte(']')
	return buf.Bytes()
}

// renameTool replaces the top-level "name" of a raw tool definition and
// leaves every other byte as it was.
func renameTool(raw json.RawMessage, name string) (json.RawMessage, error) {
	if !json.Valid(raw) {
		return nil, errors.New("tool definition is not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("tool definition is not an object")
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if k != "name" {
			continue
		}
		end := int(dec.InputOffset())
		start := end - len(v)
		quoted, err := json.Marshal(name)
		if err != nil {
			return nil, err
		}
		out := make(json.RawMessage, 0, len(raw)-len(v)+len(quoted))
		out = append(out, raw[:start]...)
		out = append(out, quoted...)
		return append(out, raw[end:]...), nil
	}
	return nil, errors.New("tool definition has no name")
}

// slogWriter adapts mcp-go's *log.Logger output to slog.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(b []byte) (int, error) {
	w.l.Warn(string(bytes.TrimSpace(b)), "from", "mcp-go")
	return len(b), nil
}
