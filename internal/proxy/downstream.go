package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/toolwarden/toolwarden/internal/audit"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/rawjson"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// What the upstreams ask of the client, and what they log.
//
// A server behaves differently with a client that can sample, elicit or
// list roots (server-everything lists more tools; server-filesystem takes
// its allowed directories from the roots). So the proxy tells each
// upstream the capabilities its own client declared in initialize, relays
// the requests the upstream then makes (sampling/createMessage,
// elicitation/create, roots/list) to the client under ids of its own, and
// the client's answers back, byte for byte. The answers go to the
// upstream that asked and to nothing else: they are not approvals (those
// are bound to toolwarden's own signed questions, see approval), and an
// answer to a request the proxy did not send is dropped.
//
// Log messages (notifications/message) are relayed too, at or above the
// level the client set with logging/setLevel, which goes to every upstream
// that offers logging (and again after a restart). In proxy mode a
// message's logger names its server, and an upstream's elicitation says
// which server asks.

// helloWait bounds how long the upstreams wait for the client's first
// message (its initialize, with its capabilities) before they start
// without them.
const helloWait = 2 * time.Second

// notifyTimeout bounds forwarding the client's log level or roots change
// to one upstream.
const notifyTimeout = 10 * time.Second

// relayIDPrefix starts the ids of the requests the proxy relays to its
// client.
const relayIDPrefix = "toolwarden-relay-"

// downstream is the state of what the proxy relays to its client.
type downstream struct {
	helloOnce sync.Once
	hello     chan struct{} // closed once the client's first message was read

	// operating is closed once the client has said it is initialized (see
	// clientOperating); relayed requests wait for it.
	operatingOnce sync.Once
	operating     chan struct{}

	mu      sync.Mutex
	ids     uint64
	waits   map[string]chan relayAnswer // by the id (rawjson.IDKey) of a relayed request
	level   mcp.LoggingLevel            // the client's, "" until it set one
	leveled bool

	// version is the protocol version the client asked for in its
	// initialize request ("" when unknown), written before hello closes:
	// the elicitation form takes the shape that version's clients read.
	version string
}

// relayAnswer is the client's answer to a relayed request: its raw result
// or raw error (copies).
type relayAnswer struct {
	result, rpcErr json.RawMessage
}

// heard notes the client's first message (nil when its input ended first):
// an initialize tells the upstreams, which have not started yet, what the
// client can do. A 2026-07-28 client sends no initialize, and its
// upstreams are told nothing: such a client answers a server's questions
// in the tools/call round trip, which the proxy does not relay.
func (p *Proxy) heard(first *message) {
	p.down.helloOnce.Do(func() {
		var caps mcp.ClientCapabilities
		if first != nil && first.method == string(mcp.MethodInitialize) && first.readCapabilities(&caps) {
			p.down.version = first.clientVersion
			for _, u := range p.ups {
				u.SetClientCapabilities(caps)
			}
		} else {
			p.clientOperating() // no handshake to wait for
		}
		close(p.down.hello)
	})
}

// readCapabilities decodes an initialize request's params.capabilities
// (absent or null: none), as mcp-go decodes them from the same bytes; it
// reports false when they are not capabilities.
func (m *message) readCapabilities(caps *mcp.ClientCapabilities) bool {
	if m.status != rawjson.OK || !m.object || m.typeFault != "" || m.keyProblem("the message") != "" || m.keyProblem("params") != "" {
		return false // refused (see intake.refuse): it says nothing
	}
	if k := rawjson.Kind(m.capabilities); k == 0 || k == 'n' {
		return true
	}
	return json.Unmarshal(m.capabilities, caps) == nil
}

// awaitHello waits for the client's first message (see heard), at most
// helloWait.
func (p *Proxy) awaitHello(ctx context.Context) {
	t := time.NewTimer(helloWait)
	defer t.Stop()
	select {
	case <-p.down.hello:
	case <-t.C:
	case <-ctx.Done():
	}
}

// clientOperating ends the handshake's hold on relayed requests: MCP's
// lifecycle asks a server to send no requests (other than pings and
// logging) before the client's notifications/initialized, and servers ask
// during their own start (server-filesystem asks for roots at once), which
// wrap runs before it answers the client's initialize. The client's first
// request other than initialize and ping ends the hold too: a client that
// never says it is initialized still gets its servers' questions once it
// is evidently in operation.
func (p *Proxy) clientOperating() {
	p.down.operatingOnce.Do(func() { close(p.down.operating) })
}

// noteLifecycle ends the hold (see clientOperating) on the client's
// notifications/initialized or on a request that is neither initialize
// nor ping. It reports whether the hold has ended.
func (p *Proxy) noteLifecycle(m *message) bool {
	method := m.members[keyMethod]
	if !m.object || method == nil {
		return false
	}
	name := m.method
	hasID := m.id() != nil && rawjson.Kind(m.id()) != 'n'
	switch k := rawjson.Kind(method); {
	case k != '"' && k != 'n':
		return false
	case !hasID && name != string(mcp.MethodNotificationInitialized):
		return false
	case hasID && (name == string(mcp.MethodInitialize) || name == string(mcp.MethodPing)):
		return false
	}
	p.clientOperating()
	return true
}

// upstreamAsked relays a request an upstream made of its client
// (upstream.ServerRequestFunc) and returns the client's answer. The audit
// log records it (host.Relayed).
func (p *Proxy) upstreamAsked(ctx context.Context, u *upstream.Client, method string, params json.RawMessage) (json.RawMessage, *upstream.RPCError) {
	res, rpcErr, outcome := p.relay(ctx, u, method, params)
	if method == string(mcp.MethodListRoots) && rpcErr == nil {
		p.rootsAnswered(u, res)
	}
	p.h.Audit(p.session, audit.Relay{Server: u.Name(), Method: method, Outcome: outcome})
	return res, rpcErr
}

// relay is upstreamAsked's work; outcome is how it ended (see audit.Relay).
func (p *Proxy) relay(ctx context.Context, u *upstream.Client, method string, params json.RawMessage) (json.RawMessage, *upstream.RPCError, string) {
	if method == string(mcp.MethodElicitationCreate) && p.aggregates() {
		params = withAsker(params, u.Name())
	}
	d := &p.down
	ch := make(chan relayAnswer, 1)
	d.mu.Lock()
	if len(d.waits) >= maxInFlight {
		d.mu.Unlock()
		return nil, &upstream.RPCError{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("toolwarden: more than %d requests to the client are in flight; try again later", maxInFlight)}, "refused"
	}
	if d.waits == nil {
		d.waits = map[string]chan relayAnswer{}
	}
	d.ids++
	id := `"` + relayIDPrefix + strconv.FormatUint(d.ids, 10) + `"`
	// Keyed by type and value, so that the answer's id matches however it
	// is spelled ("\u0074oolwarden-relay-1" too) and nothing else does.
	key, _ := rawjson.IDKey([]byte(id))
	d.waits[key] = ch
	d.mu.Unlock()
	forget := func() {
		d.mu.Lock()
		delete(d.waits, key)
		d.mu.Unlock()
	}
	select {
	case <-d.operating:
	case <-ctx.Done():
		forget() // withdrawn before the client ever saw it
		return nil, &upstream.RPCError{Code: mcp.REQUEST_INTERRUPTED, Message: "cancelled"}, "withdrawn"
	case <-p.runCtx.Done():
		forget()
		return nil, &upstream.RPCError{Code: mcp.INTERNAL_ERROR, Message: "toolwarden: the client is gone"}, "refused"
	}

	line := make([]byte, 0, len(params)+len(method)+len(id)+48)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = append(line, id...)
	line = append(line, `,"method":`...)
	line = strconv.AppendQuote(line, method)
	if params != nil {
		line = append(line, `,"params":`...)
		line = appendOneLine(line, params)
	}
	line = append(line, "}\n"...)
	if _, err := p.out.Write(line); err != nil {
		forget()
		return nil, &upstream.RPCError{Code: mcp.INTERNAL_ERROR, Message: "toolwarden: cannot reach the client: " + err.Error()}, "refused"
	}

	select {
	case a := <-ch:
		if a.rpcErr != nil {
			return nil, relayedError(a.rpcErr), "error"
		}
		return a.result, nil, "answered"
	case <-ctx.Done():
		// The upstream withdrew its request (or went away): so do we.
		forget()
		note := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"the server cancelled its request"}}`+"\n", id)
		_, _ = p.out.Write(note)
		return nil, &upstream.RPCError{Code: mcp.REQUEST_INTERRUPTED, Message: "cancelled"}, "withdrawn"
	case <-p.runCtx.Done():
		forget()
		return nil, &upstream.RPCError{Code: mcp.INTERNAL_ERROR, Message: "toolwarden: the client is gone"}, "refused"
	}
}

// relayedError reads the client's JSON-RPC error for the upstream.
func relayedError(raw json.RawMessage) *upstream.RPCError {
	var e struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return &upstream.RPCError{Code: mcp.INTERNAL_ERROR, Message: "the client answered with a malformed error"}
	}
	if string(e.Data) == "null" {
		e.Data = nil
	}
	return &upstream.RPCError{Code: e.Code, Message: e.Message, Data: e.Data}
}

// withAsker prefixes an elicitation's message with the server asking, so
// that the human knows which of the proxy's servers wants the answer.
func withAsker(params json.RawMessage, server string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return params
	}
	msg, _ := rawjson.String(m["message"])
	b, err := json.Marshal(server + ": " + msg)
	if err != nil {
		return params
	}
	m["message"] = b
	out, err := json.Marshal(m)
	if err != nil {
		return params
	}
	return out
}

// relayAnswered hands the client's answer to a request the proxy relayed
// to the request waiting for it: key is the answer's id (rawjson.IDKey),
// result or rpcErr its raw result or error (copied here). It reports
// whether a request waited for that id.
func (p *Proxy) relayAnswered(key string, result, rpcErr []byte) bool {
	d := &p.down
	d.mu.Lock()
	ch := d.waits[key]
	delete(d.waits, key)
	d.mu.Unlock()
	if ch == nil {
		return false
	}
	a := relayAnswer{}
	if rpcErr != nil {
		a.rpcErr = append(json.RawMessage(nil), rpcErr...)
	} else {
		a.result = append(json.RawMessage(nil), result...)
	}
	ch <- a
	return true
}

// setLevel serves logging/setLevel: the level applies to what the proxy
// relays, and goes to every upstream that offers logging. It reports false
// for a request it leaves to mcp-go: one whose level is not a string, or
// a 2026-07-28 request.
func (p *Proxy) setLevel(m *message) bool {
	lk := rawjson.Kind(m.level)
	if m.id() == nil || m.typeFault != "" || (lk != 0 && lk != 'n' && lk != '"') || mcp.IsModernProtocol(m.protocolVersion) {
		return false
	}
	s, _ := rawjson.String(m.level)
	level := mcp.LoggingLevel(s)
	r := &passRequest{id: append(json.RawMessage(nil), m.id()...), method: m.method}
	if !validLevel(level) {
		p.replyError(r, &upstream.RPCError{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("logging/setLevel: %q is not a log level (debug, info, notice, warning, error, critical, alert, emergency)", level)})
		return true
	}
	d := &p.down
	d.mu.Lock()
	d.level, d.leveled = level, true
	d.mu.Unlock()
	for _, u := range p.ups {
		go func() {
			ctx, cancel := context.WithTimeout(p.runCtx, notifyTimeout)
			defer cancel()
			if err := u.SetLogLevel(ctx, level); err != nil {
				p.log.Warn("setting an upstream's log level failed", "server", u.Name(), "err", err)
			}
		}()
	}
	p.reply(r, json.RawMessage(`{}`))
	return true
}

func validLevel(l mcp.LoggingLevel) bool { return l.ShouldSendTo(mcp.LoggingLevelDebug) }

// relayLog writes an upstream's log message to the client, if it is at or
// above the client's level; in proxy mode its logger names the server.
func (p *Proxy) relayLog(u *upstream.Client, params map[string]any) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	level, _ := params["level"].(string)
	d := &p.down
	d.mu.Lock()
	min, leveled := d.level, d.leveled
	d.mu.Unlock()
	if leveled && !mcp.LoggingLevel(level).ShouldSendTo(min) {
		return nil
	}
	if p.aggregates() {
		logger := u.Name()
		if l, ok := params["logger"].(string); ok && l != "" {
			logger += "/" + l
		}
		params["logger"] = logger
	}
	return params
}

// rootsChanged forwards the client's notifications/roots/list_changed to
// every upstream (each was told of the client's roots capability).
func (p *Proxy) rootsChanged() {
	for _, u := range p.ups {
		go func() {
			ctx, cancel := context.WithTimeout(p.runCtx, notifyTimeout)
			defer cancel()
			if err := u.NotifyServer(ctx, mcp.MethodNotificationRootsListChanged); err != nil {
				p.log.Warn("forwarding roots/list_changed failed", "server", u.Name(), "err", err)
			}
		}()
	}
}
