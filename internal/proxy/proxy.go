package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/upstream"
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
	signer  *channel.Signer
	ups     []*upstream.Client
	log     *slog.Logger

	mu      sync.RWMutex
	routes  map[string]*route // by downstream tool name
	srv     *server.MCPServer
	sessCtx context.Context // carries mcp-go's stdio client session

	out      *output
	runCtx   context.Context
	work     chan workItem  // to idle workers
	inflight sync.WaitGroup // calls admitted and not yet answered
	callsMu  sync.Mutex
	active   int   // calls admitted and not yet answered
	head     *call // the calls that can be cancelled (see track)
	stopping bool

	rebuildMu sync.Mutex
	started   chan struct{} // closed once every upstream was tried once

	// Prompts, resources and completions (see passthrough.go).
	passing   passing
	down      downstream
	contexts  serverContexts // what each upstream's calls are resolved against, for path rules
	resRoutes *resourceRoutes
	relistMu  sync.Mutex // one relisting of resources at a time

	listed lastListed // the tools the client was last listed (reload.go)
	late   lateAsks   // asks that may outlive their call (askwait.go)
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
func New(h *host.Host, specs []serverspec.Spec, opts Options) *Proxy {
	p := &Proxy{
		h:       h,
		opts:    opts,
		session: opts.sessionID,
		signer:  channel.NewSigner(opts.stateTTL, 1024),
		log:     opts.log,
		routes:  map[string]*route{},
		started: make(chan struct{}),
		work:    make(chan workItem),
	}
	p.down.hello = make(chan struct{})
	p.down.operating = make(chan struct{})
	if p.session == "" {
		var b [12]byte
		_, _ = rand.Read(b[:])
		p.session = "stdio-" + hex.EncodeToString(b[:])
	}
	for _, s := range specs {
		if s.Logger == nil {
			s.Logger = p.log
		}
		u := upstream.New(s, opts.version, p.upstreamChanged)
		u.SetMaxResultBytes(opts.maxResult)
		u.OnNotify(p.upstreamNotified)
		u.OnProgress(p.relayProgress)
		u.OnServerRequest(p.upstreamAsked)
		p.ups = append(p.ups, u)
	}
	p.resRoutes = newResourceRoutes(p.serverNames())
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
	defer startProfiles()()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer p.shutdown()
	p.runCtx = ctx

	if pin := pollableReader(in); pin != in {
		in = pin
		defer pin.(io.Closer).Close()
	}
	if pout := pollableWriter(out); pout != out {
		out = pout
		defer pout.(io.Closer).Close()
	}
	p.out = newOutput(out, p)
	// Our own reader serves tools/call and hands everything else to mcp-go
	// through a pipe (see intake). It reads the client's first message at
	// once: the upstreams start when they know the client's capabilities
	// (see heard), and then it waits until mcp-go is listening.
	pr, pw := io.Pipe()
	r := newIntake(in, p.out, p)
	listening := make(chan struct{})
	go r.pump(pw, listening)

	go p.startAll(ctx)
	if p.opts.waitForUpstreams {
		select {
		case <-p.started:
		case <-ctx.Done():
			return ctx.Err()
		}
		if serr := p.startupFailure(); serr != nil {
			return p.refuse(ctx, pr, listening, serr) // see startup.go
		}
	}

	opts := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithPromptCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithCompletions(),
		server.WithLogging(),
		server.WithRecovery(),
	}
	if !p.opts.namespace && len(p.ups) == 1 {
		if ins := p.ups[0].Instructions(); ins != "" {
			opts = append(opts, server.WithInstructions(ins))
		}
	}
	name, version, info := p.serverInfo()
	srv := server.NewMCPServer(name, version, append(opts, info...)...)
	p.mu.Lock()
	p.srv = srv
	p.mu.Unlock()
	p.rebuild()

	for range max(p.opts.workers, 1) {
		go p.worker(ctx)
	}
	close(listening)
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
	p.stopCalls()
	p.stopRequests()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// serverInfo is what initialize announces: the proxy's own name and
// version, or, in front of one started server with WithUpstreamServerInfo,
// that server's serverInfo (name and version, and the options for its
// title, description and website).
func (p *Proxy) serverInfo() (name, version string, opts []server.ServerOption) {
	if !p.opts.upstreamInfo || p.opts.namespace || len(p.ups) != 1 {
		return p.opts.name, p.opts.version, nil
	}
	info, ok := p.ups[0].ServerInfo()
	if !ok || info.Name == "" {
		return p.opts.name, p.opts.version, nil
	}
	if info.Title != "" {
		opts = append(opts, server.WithTitle(info.Title))
	}
	if info.Description != "" {
		opts = append(opts, server.WithDescription(info.Description))
	}
	if info.WebsiteURL != "" {
		opts = append(opts, server.WithWebsiteURL(info.WebsiteURL))
	}
	return info.Name, info.Version, opts
}

// call is one tools/call in flight.
type call struct {
	p    *Proxy
	req  callRequest
	dc   decided
	done atomic.Bool

	retried bool // the one retry of an idempotent call was made

	// Guarded by p.callsMu.
	prev, next *call // in p.head's list while it can be cancelled
	listed     bool
	cancelled  bool
	pending    *upstream.Pending  // while it runs upstream (allowed outright)
	stop       context.CancelFunc // while it waits on a worker
}

// maxInFlight bounds concurrent calls; past it a call gets a tool error.
const maxInFlight = 256

// dispatch serves a tools/call, on the reader's goroutine as far as it can:
// the decision (host.Check, which does not wait) and, for a call allowed
// outright, writing it upstream. The upstream's answer is then relayed by
// the upstream connection's reader (see Receive), so a call that runs
// takes no goroutine hand-off in the proxy, as in a plain byte relay. A
// call that must wait for a human (an ask, an answer to one) continues on
// a worker. notifications/cancelled for its id cancels it.
func (p *Proxy) dispatch(c *call) {
	req := &c.req
	p.callsMu.Lock()
	stopping, n := p.stopping, p.active
	if !stopping && n < maxInFlight {
		p.active++
		p.inflight.Add(1)
	}
	p.callsMu.Unlock()
	switch {
	case stopping:
		p.respond(req, made(toolError("toolwarden is shutting down; %s was not called.", req.Name)))
		return
	case n >= maxInFlight:
		p.respond(req, made(toolError("toolwarden: more than %d calls are in flight; try %s again later.", maxInFlight, req.Name)))
		return
	}
	defer c.recover()
	next, out := p.decide(p.runCtx, req, &c.dc)
	switch next {
	case stepDone:
		c.finish(out)
	case stepForward:
		// Nothing can have cancelled it yet: notifications/cancelled is
		// read by this goroutine.
		pd := c.dc.rt.up.BeginWithProgress(c.dc.rt.tool.Name, c.dc.call.Arguments, c.req.Progress, c)
		// Only now, off the call's critical path, is it made cancellable.
		p.track(c, pd)
	default:
		p.track(c, nil)
		select {
		case p.work <- workItem{c, next}:
		default:
			go p.wait(c, next)
		}
	}
}

// track lists the call as cancellable, with its upstream request if it
// has one, unless it was answered already; once the proxy is stopping, it
// cancels the call instead.
func (p *Proxy) track(c *call, pd *upstream.Pending) {
	p.callsMu.Lock()
	if c.pending == nil { // else a retry (see Receive) came first
		c.pending = pd
	}
	stopping := p.stopping
	if !c.done.Load() && !c.listed {
		c.listed = true
		c.next = p.head
		if p.head != nil {
			p.head.prev = c
		}
		p.head = c
	}
	p.callsMu.Unlock()
	if stopping {
		c.cancel()
	}
}

// workItem is a call that must wait for a human, and what it waits for.
type workItem struct {
	c    *call
	next step
}

// worker serves calls that wait. Workers are long-lived goroutines, whose
// stacks have already grown to what a call needs; when every one is busy
// (say, waiting for a human), a call gets a goroutine of its own.
func (p *Proxy) worker(ctx context.Context) {
	for {
		select {
		case w := <-p.work:
			p.wait(w.c, w.next)
		case <-ctx.Done():
			return
		}
	}
}

// wait runs the rest of a call that waits (see proceed) and answers it.
func (p *Proxy) wait(c *call, next step) {
	defer c.recover()
	ctx, stop := context.WithCancel(p.runCtx)
	defer stop()
	p.callsMu.Lock()
	c.stop = stop
	cancelled := c.cancelled
	p.callsMu.Unlock()
	if cancelled {
		stop()
	}
	c.finish(p.proceed(ctx, &c.req, &c.dc, next))
}

// Receive gets the upstream's answer to a call dispatch made
// (upstream.Receiver): it retries an idempotent call once after a
// transport failure, runs Observe and relays the result. It runs on the
// upstream connection's reader, and raw is a view of its buffer: the
// result is written to the client before Receive returns, and not kept.
func (c *call) Receive(raw json.RawMessage, err error) {
	p, dc := c.p, &c.dc
	if err != nil && !c.retried && retriable(err, &dc.d) {
		c.retried = true
		p.log.Info("retrying idempotent call after transport failure", "server", dc.rt.up.Name(), "tool", dc.rt.tool.Name, "err", err)
		go c.retry()
		return
	}
	defer c.recover()
	c.finish(p.settle(p.runCtx, dc.rt, dc.call, &dc.d, raw, err))
}

// retry makes the call upstream again, unless it was cancelled meanwhile.
func (c *call) retry() {
	defer c.recover()
	p := c.p
	p.callsMu.Lock()
	cancelled := c.cancelled
	p.callsMu.Unlock()
	if cancelled {
		c.finish(p.settle(p.runCtx, c.dc.rt, c.dc.call, &c.dc.d, nil, context.Canceled))
		return
	}
	pd := c.dc.rt.up.BeginWithProgress(c.dc.rt.tool.Name, c.dc.call.Arguments, c.req.Progress, c)
	p.callsMu.Lock()
	c.pending = pd
	cancelled = c.cancelled
	p.callsMu.Unlock()
	if cancelled {
		pd.Cancel()
	}
}

// finish answers the call (once) and forgets it.
func (c *call) finish(out outcome) {
	if c.done.Swap(true) {
		return
	}
	p := c.p
	p.respond(&c.req, out)
	p.callsMu.Lock()
	if c.listed {
		if c.prev != nil {
			c.prev.next = c.next
		} else {
			p.head = c.next
		}
		if c.next != nil {
			c.next.prev = c.prev
		}
		c.prev, c.next, c.listed = nil, nil, false
	}
	p.active--
	p.callsMu.Unlock()
	p.inflight.Done()
}

// recover turns a panic while serving the call into a tool error.
func (c *call) recover() {
	if r := recover(); r != nil {
		c.p.log.Error("panic serving a tool call", "tool", c.req.Name, "panic", r)
		c.finish(made(toolError("toolwarden: internal error serving %s: %v", c.req.Name, r)))
	}
}

// cancel stops the call: its upstream request, or its wait.
func (c *call) cancel() {
	p := c.p
	p.callsMu.Lock()
	c.cancelled = true
	pd, stop := c.pending, c.stop
	p.callsMu.Unlock()
	if pd != nil {
		pd.Cancel()
	}
	if stop != nil {
		stop()
	}
}

// cancelCall cancels the in-flight calls with this id
// (notifications/cancelled). Cancellations are rare and at most
// maxInFlight calls are in flight, so they are looked for in a list rather
// than kept in a map, which would cost every call.
func (p *Proxy) cancelCall(id json.RawMessage) {
	var cs []*call
	p.callsMu.Lock()
	for c := p.head; c != nil; c = c.next {
		if string(c.req.ID) == string(id) {
			cs = append(cs, c)
		}
	}
	p.callsMu.Unlock()
	for _, c := range cs {
		c.cancel()
	}
}

// stopCalls cancels every call in flight and waits for them to be answered;
// no call starts after it.
func (p *Proxy) stopCalls() {
	var cs []*call
	p.callsMu.Lock()
	p.stopping = true
	for c := p.head; c != nil; c = c.next {
		cs = append(cs, c)
	}
	p.callsMu.Unlock()
	for _, c := range cs {
		c.cancel()
	}
	p.inflight.Wait()
}

// startAll starts every upstream at once; one that fails is reported (see
// startup.go) and keeps being retried in the background (with its
// backoff) until it comes up, and its tools then appear with
// notifications/tools/list_changed.
func (p *Proxy) startAll(ctx context.Context) {
	p.awaitHello(ctx)
	var wg sync.WaitGroup
	for _, u := range p.ups {
		wg.Go(func() {
			if err := u.Start(ctx); err != nil {
				p.startFailed(u, err)
				if !p.opts.waitForUpstreams { // else Run gives up (see refuse)
					go p.keepTrying(ctx, u)
				}
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
	p.flushCatalog()
}

// upstreamChanged runs when an upstream's tool list changed.
func (p *Proxy) upstreamChanged(u *upstream.Client) { p.rebuild(); p.listedToCatalog(u) }

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

// visibleTools renders the tools/list array for the session (see
// renderTools) and remembers it as what the client was last listed.
func (p *Proxy) visibleTools(ctx context.Context) json.RawMessage {
	tools := p.renderTools(ctx)
	p.listed.remember(tools)
	return tools
}

// renderTools renders the tools/list array for the session: each
// upstream's tools in the upstream's order, filtered by the host (the
// visibility gate and plugins' list event), each definition byte for byte
// as the upstream sent it (renamed in proxy mode).
func (p *Proxy) renderTools(ctx context.Context) json.RawMessage {
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
	quoted, err := json.Marshal(name)
	if err != nil {
		return nil, err
	}
	out, err := replaceMember(raw, "name", quoted)
	if err != nil {
		return nil, fmt.Errorf("tool definition: %w", err)
	}
	return out, nil
}

// replaceMember replaces the value of the first top-level member key of
// a raw JSON object with value, and leaves every other byte as it was.
func replaceMember(raw json.RawMessage, key string, value json.RawMessage) (json.RawMessage, error) {
	if !json.Valid(raw) {
		return nil, errors.New("not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not an object")
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
		if k != key {
			continue
		}
		end := int(dec.InputOffset())
		start := end - len(v)
		out := make(json.RawMessage, 0, len(raw)-len(v)+len(value))
		out = append(out, raw[:start]...)
		out = append(out, value...)
		return append(out, raw[end:]...), nil
	}
	return nil, fmt.Errorf("no %q member", key)
}

// slogWriter adapts mcp-go's *log.Logger output to slog.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(b []byte) (int, error) {
	w.l.Warn(string(bytes.TrimSpace(b)), "from", "mcp-go")
	return len(b), nil
}
