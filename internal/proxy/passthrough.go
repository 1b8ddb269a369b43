package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/rawjson"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// Prompts, resources and completions pass through. They are not tool
// calls, so policy does not decide them (as in Codex). The intake reads
// these requests and hands each to a goroutine of its own, which forwards
// it and writes the upstream's result to the client as the server wrote it
// (or a JSON-RPC error with the upstream's code and message): nothing of
// this runs on the intake, and tools/call never looks at it.
//
// In front of one server (wrap) every request goes to it unchanged: names,
// URIs and cursors. In front of several (proxy mode), prompts are named
// <server>__<prompt> as tools are, resources keep their URIs, lists are
// merged (every page of every server, no cursor), and a URI goes only to
// the server that listed it (see resourceRoutes).

// passedMethods are the requests that pass through.
var passedMethods = map[string]bool{
	string(mcp.MethodPromptsList):            true,
	string(mcp.MethodPromptsGet):             true,
	string(mcp.MethodResourcesList):          true,
	string(mcp.MethodResourcesTemplatesList): true,
	string(mcp.MethodResourcesRead):          true,
	string(mcp.MethodResourcesSubscribe):     true,
	string(mcp.MethodResourcesUnsubscribe):   true,
	string(mcp.MethodCompletionComplete):     true,
}

// maxListPages bounds how many pages of one list are read from one server
// in proxy mode.
const maxListPages = 100

// passRequest is a request that passes through.
type passRequest struct {
	id     json.RawMessage
	method string
	params json.RawMessage // nil when absent or null
	modern bool            // a 2026-07-28 request
}

// passRequestOf is the request to pass through, when the message (which
// refuse found well-formed) is a request for one of passedMethods. Its id
// and params are copies: the request outlives the intake's reading.
func passRequestOf(m *message) (*passRequest, bool) {
	id := m.id()
	if !passedMethods[m.method] || id == nil || rawjson.Kind(id) == 'n' {
		return nil, false
	}
	r := &passRequest{id: append(json.RawMessage(nil), id...), method: m.method}
	if params := m.members[keyParams]; params != nil && rawjson.Kind(params) != 'n' {
		r.params = append(json.RawMessage(nil), params...)
		r.modern = mcp.IsModernProtocol(m.protocolVersion)
		if r.modern {
			r.params = withoutProtocolMeta(r.params)
		}
	}
	return r, true
}

// protocolMetaPrefix starts the _meta keys a 2026-07-28 request carries
// about its own protocol (version, client capabilities and info).
const protocolMetaPrefix = "io.modelcontextprotocol/"

// withoutProtocolMeta drops a 2026-07-28 request's protocol keys from its
// _meta: they describe the client's connection to toolwarden, while the
// upstream speaks the protocol toolwarden negotiated with it (as a
// tools/call forwards only the name and arguments). Anything else in the
// params is kept.
func withoutProtocolMeta(params json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return params
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(m["_meta"], &meta) != nil {
		return params
	}
	for k := range meta {
		if strings.HasPrefix(k, protocolMetaPrefix) {
			delete(meta, k)
		}
	}
	if len(meta) == 0 {
		delete(m, "_meta")
	} else if b, err := json.Marshal(meta); err == nil {
		m["_meta"] = b
	}
	out, err := json.Marshal(m)
	if err != nil {
		return params
	}
	return out
}

// passing is the requests in flight.
type passing struct {
	mu       sync.Mutex
	cancels  map[string]context.CancelFunc // by raw id
	stopping bool
	wg       sync.WaitGroup
}

// pass serves a request that passes through, on a goroutine of its own.
func (p *Proxy) pass(r *passRequest) {
	ps := &p.passing
	ps.mu.Lock()
	switch {
	case ps.stopping:
		ps.mu.Unlock()
		p.replyError(r, &upstream.RPCError{Code: mcp.INTERNAL_ERROR, Message: "toolwarden is shutting down"})
		return
	case len(ps.cancels) >= maxInFlight:
		ps.mu.Unlock()
		p.replyError(r, &upstream.RPCError{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("toolwarden: more than %d requests are in flight; try again later", maxInFlight)})
		return
	}
	key := string(r.id)
	if _, dup := ps.cancels[key]; dup {
		ps.mu.Unlock()
		p.replyError(r, &upstream.RPCError{Code: mcp.INVALID_REQUEST, Message: "toolwarden: a request with this id is already in flight"})
		return
	}
	if ps.cancels == nil {
		ps.cancels = map[string]context.CancelFunc{}
	}
	ctx, cancel := context.WithCancel(p.runCtx)
	ps.cancels[key] = cancel
	ps.wg.Add(1)
	ps.mu.Unlock()
	go func() {
		defer ps.wg.Done()
		defer func() {
			ps.mu.Lock()
			delete(ps.cancels, key)
			ps.mu.Unlock()
			cancel()
		}()
		defer func() {
			if v := recover(); v != nil {
				p.log.Error("panic serving a request", "method", r.method, "panic", v)
				p.replyError(r, &upstream.RPCError{Code: mcp.INTERNAL_ERROR, Message: fmt.Sprintf("toolwarden: internal error serving %s: %v", r.method, v)})
			}
		}()
		res, rpcErr := p.serve(ctx, r)
		if ctx.Err() != nil {
			return // cancelled by the client (which expects no answer), or the client is gone
		}
		if rpcErr != nil {
			p.replyError(r, rpcErr)
			return
		}
		if r.modern {
			res = modernResult(res, cacheable(r.method))
		}
		p.reply(r, res)
	}()
}

// cancelRequest cancels the request in flight with this id
// (notifications/cancelled).
func (p *Proxy) cancelRequest(id json.RawMessage) {
	p.passing.mu.Lock()
	cancel := p.passing.cancels[string(id)]
	p.passing.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// stopRequests cancels every request in flight and waits for them; no
// request starts after it.
func (p *Proxy) stopRequests() {
	ps := &p.passing
	ps.mu.Lock()
	ps.stopping = true
	for _, cancel := range ps.cancels {
		cancel()
	}
	ps.mu.Unlock()
	ps.wg.Wait()
}

// reply writes a result.
func (p *Proxy) reply(r *passRequest, result json.RawMessage) {
	line := make([]byte, 0, len(result)+len(r.id)+40)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = append(line, r.id...)
	line = append(line, `,"result":`...)
	line = appendOneLine(line, result)
	line = append(line, "}\n"...)
	_, _ = p.out.Write(line)
}

// replyError writes a JSON-RPC error.
func (p *Proxy) replyError(r *passRequest, e *upstream.RPCError) {
	body := struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{e.Code, e.Message, e.Data}
	if len(body.Data) > 0 && !json.Valid(body.Data) {
		body.Data = nil
	}
	b, err := json.Marshal(body)
	if err != nil {
		b = []byte(`{"code":-32603,"message":"toolwarden: cannot encode the error"}`)
	}
	line := make([]byte, 0, len(b)+len(r.id)+40)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = append(line, r.id...)
	line = append(line, `,"error":`...)
	line = append(line, b...)
	line = append(line, "}\n"...)
	_, _ = p.out.Write(line)
}

// serve answers a request: from the one upstream (wrap), or routed and
// merged across several (proxy mode).
func (p *Proxy) serve(ctx context.Context, r *passRequest) (json.RawMessage, *upstream.RPCError) {
	p.waitStarted(ctx)
	if !p.aggregates() {
		return p.serveOne(ctx, p.ups[0], r, r.params)
	}
	switch r.method {
	case string(mcp.MethodPromptsList):
		return p.mergeList(ctx, r.method, "prompts", hasPrompts)
	case string(mcp.MethodResourcesList):
		return p.mergeList(ctx, r.method, "resources", hasResources)
	case string(mcp.MethodResourcesTemplatesList):
		return p.mergeList(ctx, r.method, "resourceTemplates", hasResources)
	case string(mcp.MethodPromptsGet):
		return p.getPrompt(ctx, r)
	case string(mcp.MethodCompletionComplete):
		return p.complete(ctx, r)
	}
	// resources/read, subscribe, unsubscribe
	uri, ok := paramString(r.params, "uri")
	if !ok {
		return nil, &upstream.RPCError{Code: mcp.INVALID_PARAMS, Message: r.method + ": params.uri must be a string"}
	}
	u := p.resourceServer(ctx, uri, r.method == string(mcp.MethodResourcesUnsubscribe))
	if u == nil {
		return nil, unknownURI(uri)
	}
	return p.serveOne(ctx, u, r, r.params)
}

// aggregates reports whether the proxy serves several servers as one
// (proxy mode): prompts are then namespaced, lists merged and URIs
// routed. Prompts are namespaced whenever tools are, and whenever several
// servers share the proxy (their names could collide).
func (p *Proxy) aggregates() bool { return p.opts.namespace || len(p.ups) != 1 }

// waitStarted waits, at most listWait, until every upstream was tried
// once, as the first tools/list does (on the request's goroutine, not the
// intake's).
func (p *Proxy) waitStarted(ctx context.Context) {
	select {
	case <-p.started:
		return
	default:
	}
	t := time.NewTimer(listWait)
	defer t.Stop()
	select {
	case <-p.started:
	case <-t.C:
	case <-ctx.Done():
	}
}

// serveOne forwards a request to one server, with params. A server that
// does not declare the capability gets nothing: lists are empty and
// completions have no values.
func (p *Proxy) serveOne(ctx context.Context, u *upstream.Client, r *passRequest, params json.RawMessage) (json.RawMessage, *upstream.RPCError) {
	if err := u.Start(ctx); err != nil {
		return nil, p.requestError(u, r.method, err)
	}
	caps, up := u.Capabilities()
	if !up { // it stopped again at once
		return nil, p.requestError(u, r.method, &upstream.TransportError{Server: u.Name(), Err: errors.New("the server stopped")})
	}
	if !offers(caps, r.method) {
		if empty := emptyResult(r.method); empty != nil {
			return empty, nil
		}
		return nil, &upstream.RPCError{Code: mcp.METHOD_NOT_FOUND, Message: fmt.Sprintf("toolwarden: server %s does not offer %s (it did not declare the capability)", u.Name(), r.method)}
	}
	var (
		res json.RawMessage
		err error
	)
	switch r.method {
	case string(mcp.MethodResourcesSubscribe), string(mcp.MethodResourcesUnsubscribe):
		uri, ok := paramString(params, "uri")
		if !ok {
			return nil, &upstream.RPCError{Code: mcp.INVALID_PARAMS, Message: r.method + ": params.uri must be a string"}
		}
		if r.method == string(mcp.MethodResourcesSubscribe) {
			res, err = u.Subscribe(ctx, uri, params)
		} else {
			res, err = u.Unsubscribe(ctx, uri, params)
		}
	default:
		res, err = u.Request(ctx, r.method, params)
	}
	if err != nil {
		return nil, p.requestError(u, r.method, err)
	}
	return res, nil
}

// offers reports whether a server's capabilities cover a method.
func offers(caps mcp.ServerCapabilities, method string) bool {
	switch method {
	case string(mcp.MethodPromptsList), string(mcp.MethodPromptsGet):
		return hasPrompts(caps)
	case string(mcp.MethodResourcesSubscribe), string(mcp.MethodResourcesUnsubscribe):
		return caps.Resources != nil && caps.Resources.Subscribe
	case string(mcp.MethodCompletionComplete):
		return caps.Completions != nil
	}
	return hasResources(caps)
}

func hasPrompts(caps mcp.ServerCapabilities) bool   { return caps.Prompts != nil }
func hasResources(caps mcp.ServerCapabilities) bool { return caps.Resources != nil }

// emptyResult is the answer of a server that offers nothing of the kind,
// or nil when there is none (the request is an error).
func emptyResult(method string) json.RawMessage {
	switch method {
	case string(mcp.MethodPromptsList):
		return json.RawMessage(`{"prompts":[]}`)
	case string(mcp.MethodResourcesList):
		return json.RawMessage(`{"resources":[]}`)
	case string(mcp.MethodResourcesTemplatesList):
		return json.RawMessage(`{"resourceTemplates":[]}`)
	case string(mcp.MethodCompletionComplete):
		return json.RawMessage(`{"completion":{"values":[]}}`)
	}
	return nil
}

// requestError turns a failed upstream request into the client's
// JSON-RPC error: the server's own error as it sent it, or one that says
// what happened.
func (p *Proxy) requestError(u *upstream.Client, method string, err error) *upstream.RPCError {
	var rpc *upstream.RPCError
	var un *upstream.UnavailableError
	msg := ""
	switch {
	case errors.As(err, &rpc):
		return rpc
	case errors.Is(err, upstream.ErrTimeout):
		msg = fmt.Sprintf("toolwarden: server %s did not answer %s within %s (tool_timeout_sec); the request was cancelled", u.Name(), method, u.ToolTimeout())
	case errors.As(err, &un):
		msg = "toolwarden: " + un.Error()
	case upstream.IsTransport(err):
		msg = fmt.Sprintf("toolwarden: %s failed because server %s stopped or the connection broke (%v); it will be restarted on the next request", method, u.Name(), errors.Unwrap(err))
	default:
		msg = fmt.Sprintf("toolwarden: %s to server %s failed: %v", method, u.Name(), err)
	}
	return &upstream.RPCError{Code: mcp.INTERNAL_ERROR, Message: msg}
}

// serverNames are the upstreams' names, in order.
func (p *Proxy) serverNames() []string {
	names := make([]string, len(p.ups))
	for i, u := range p.ups {
		names[i] = u.Name()
	}
	return names
}

func (p *Proxy) upstreamNamed(name string) *upstream.Client {
	for _, u := range p.ups {
		if u.Name() == name {
			return u
		}
	}
	return nil
}

// serverList is one server's part of a merged list.
type serverList struct {
	items []json.RawMessage
	ok    bool // the server answered (all pages)
}

// listAll reads every page of a list from every connected server that
// declares the capability, at once. A server that is down, offers nothing
// or fails is left out (and logged); the others still answer.
func (p *Proxy) listAll(ctx context.Context, method, key string, has func(mcp.ServerCapabilities) bool) []serverList {
	out := make([]serverList, len(p.ups))
	var wg sync.WaitGroup
	for i, u := range p.ups {
		caps, up := u.Capabilities()
		if !up || !has(caps) {
			continue
		}
		wg.Go(func() {
			items, err := listPages(ctx, u, method, key)
			if err != nil {
				if ctx.Err() == nil {
					p.log.Warn("listing failed; the server's entries are left out", "server", u.Name(), "method", method, "err", err)
				}
				return
			}
			out[i] = serverList{items: items, ok: true}
		})
	}
	wg.Wait()
	// Keep the routes to the URIs and templates just listed.
	if method == string(mcp.MethodResourcesList) || method == string(mcp.MethodResourcesTemplatesList) {
		for i, l := range out {
			if !l.ok {
				continue
			}
			if method == string(mcp.MethodResourcesList) {
				p.resRoutes.setResources(p.ups[i].Name(), memberStrings(l.items, "uri"))
			} else {
				p.resRoutes.setTemplates(p.ups[i].Name(), memberStrings(l.items, "uriTemplate"))
			}
		}
	}
	return out
}

// listPages reads every page of a list from one server.
func listPages(ctx context.Context, u *upstream.Client, method, key string) ([]json.RawMessage, error) {
	var items []json.RawMessage
	cursor := ""
	for page := 0; ; page++ {
		if page == maxListPages {
			return items, fmt.Errorf("more than %d pages; the rest is left out", maxListPages)
		}
		var params json.RawMessage
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		raw, err := u.Request(ctx, method, params)
		if err != nil {
			return nil, err
		}
		var res map[string]json.RawMessage
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("malformed %s result: %w", method, err)
		}
		var pageItems []json.RawMessage
		if v, ok := res[key]; ok && string(v) != "null" {
			if err := json.Unmarshal(v, &pageItems); err != nil {
				return nil, fmt.Errorf("malformed %s result: %s: %w", method, key, err)
			}
		}
		items = append(items, pageItems...)
		var next string
		if v, ok := res["nextCursor"]; ok {
			_ = json.Unmarshal(v, &next)
		}
		if next == "" || next == cursor {
			return items, nil
		}
		cursor = next
	}
}

// mergeList answers a list request in proxy mode: every server's items,
// in server order, prompts renamed <server>__<prompt>, and no cursor.
func (p *Proxy) mergeList(ctx context.Context, method, key string, has func(mcp.ServerCapabilities) bool) (json.RawMessage, *upstream.RPCError) {
	lists := p.listAll(ctx, method, key, has)
	var buf bytes.Buffer
	buf.WriteString(`{"`)
	buf.WriteString(key)
	buf.WriteString(`":[`)
	n := 0
	for i, l := range lists {
		for _, item := range l.items {
			if key == "prompts" {
				name, ok := paramString(item, "name")
				if !ok {
					p.log.Warn("prompt without a name left out", "server", p.ups[i].Name())
					continue
				}
				quoted, _ := json.Marshal(p.ups[i].Name() + Separator + name)
				renamed, err := replaceMember(item, "name", quoted)
				if err != nil {
					continue
				}
				item = renamed
			}
			if n > 0 {
				buf.WriteByte(',')
			}
			buf.Write(item)
			n++
		}
	}
	buf.WriteString("]}")
	return buf.Bytes(), nil
}

// getPrompt routes prompts/get by the prompt's server prefix.
func (p *Proxy) getPrompt(ctx context.Context, r *passRequest) (json.RawMessage, *upstream.RPCError) {
	name, ok := paramString(r.params, "name")
	if !ok {
		return nil, &upstream.RPCError{Code: mcp.INVALID_PARAMS, Message: "prompts/get: params.name must be a string"}
	}
	u, prompt := p.promptServer(name)
	if u == nil {
		return nil, unknownPrompt(name)
	}
	quoted, _ := json.Marshal(prompt)
	params, err := replaceMember(r.params, "name", quoted)
	if err != nil {
		return nil, &upstream.RPCError{Code: mcp.INVALID_PARAMS, Message: "prompts/get: " + err.Error()}
	}
	return p.serveOne(ctx, u, r, params)
}

func (p *Proxy) promptServer(name string) (*upstream.Client, string) {
	server, prompt, ok := promptRoute(p.serverNames(), name)
	if !ok {
		return nil, ""
	}
	return p.upstreamNamed(server), prompt
}

func unknownPrompt(name string) *upstream.RPCError {
	return &upstream.RPCError{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("toolwarden: there is no prompt %q: prompts are named <server>%s<prompt> (list the prompts again)", name, Separator)}
}

func unknownURI(uri string) *upstream.RPCError {
	return &upstream.RPCError{Code: mcp.RESOURCE_NOT_FOUND, Message: fmt.Sprintf("toolwarden: no server lists the resource %q. List resources first (resources/list, resources/templates/list) and use a URI from there: toolwarden sends a URI only to the server that listed it", uri)}
}

// complete routes completion/complete by its ref: a prompt by its
// namespaced name, a resource template by its URI.
func (p *Proxy) complete(ctx context.Context, r *passRequest) (json.RawMessage, *upstream.RPCError) {
	var params struct {
		Ref json.RawMessage `json:"ref"`
	}
	_ = json.Unmarshal(r.params, &params)
	typ, _ := paramString(params.Ref, "type")
	switch typ {
	case "ref/prompt":
		name, _ := paramString(params.Ref, "name")
		u, prompt := p.promptServer(name)
		if u == nil {
			return nil, unknownPrompt(name)
		}
		quoted, _ := json.Marshal(prompt)
		ref, err := replaceMember(params.Ref, "name", quoted)
		if err == nil {
			var out json.RawMessage
			if out, err = replaceMember(r.params, "ref", ref); err == nil {
				return p.serveOne(ctx, u, r, out)
			}
		}
		return nil, &upstream.RPCError{Code: mcp.INVALID_PARAMS, Message: "completion/complete: " + err.Error()}
	case "ref/resource":
		uri, _ := paramString(params.Ref, "uri")
		u := p.resourceServer(ctx, uri, false)
		if u == nil {
			return nil, unknownURI(uri)
		}
		return p.serveOne(ctx, u, r, r.params)
	}
	return nil, &upstream.RPCError{Code: mcp.INVALID_PARAMS, Message: `completion/complete: params.ref.type must be "ref/prompt" or "ref/resource"`}
}

// resourceServer is the server a URI goes to: for unsubscribe, first the
// one subscribed to it; then the one that listed it, or a template it falls
// under. When none did, the servers' resources and templates are listed
// again (the URI may be new: a tool's resource link), and only then is
// the URI refused. nil: no server listed it.
func (p *Proxy) resourceServer(ctx context.Context, uri string, subscribed bool) *upstream.Client {
	if subscribed {
		for _, u := range p.ups {
			if u.Subscribed(uri) {
				return u
			}
		}
	}
	if s := p.resRoutes.route(uri); s != "" {
		return p.upstreamNamed(s)
	}
	p.relistMu.Lock()
	defer p.relistMu.Unlock()
	if s := p.resRoutes.route(uri); s != "" { // a relist meanwhile found it
		return p.upstreamNamed(s)
	}
	p.listAll(ctx, string(mcp.MethodResourcesList), "resources", hasResources)
	p.listAll(ctx, string(mcp.MethodResourcesTemplatesList), "resourceTemplates", hasResources)
	if s := p.resRoutes.route(uri); s != "" {
		return p.upstreamNamed(s)
	}
	return nil
}

// upstreamNotified relays an upstream's notification about its prompts
// and resources to the client (see upstream.OnNotify). In proxy mode a
// resource update is relayed only for a URI the client subscribed to at
// that server.
func (p *Proxy) upstreamNotified(u *upstream.Client, method string, params json.RawMessage) {
	if method == mcp.MethodNotificationResourceUpdated && p.aggregates() {
		if uri, ok := paramString(params, "uri"); !ok || !u.Subscribed(uri) {
			return
		}
	}
	p.mu.RLock()
	srv := p.srv
	p.mu.RUnlock()
	if srv == nil {
		return // no client yet
	}
	var m map[string]any
	if len(params) > 0 {
		_ = json.Unmarshal(params, &m)
	}
	if method == string(mcp.MethodNotificationMessage) {
		if m = p.relayLog(u, m); m == nil {
			return
		}
	}
	srv.SendNotificationToAllClients(method, m)
}

// paramString reads a string member of a raw object.
func paramString(raw json.RawMessage, key string) (string, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return "", false
	}
	v, ok := m[key]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// memberStrings reads one string member of each raw object.
func memberStrings(items []json.RawMessage, key string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s, ok := paramString(it, key); ok {
			out = append(out, s)
		}
	}
	return out
}

// cacheable reports whether a method's result carries caching hints for
// 2026-07-28 clients: lists and reads do.
func cacheable(method string) bool {
	switch method {
	case string(mcp.MethodPromptsList), string(mcp.MethodResourcesList), string(mcp.MethodResourcesTemplatesList), string(mcp.MethodResourcesRead):
		return true
	}
	return false
}

// modernResult adds what a 2026-07-28 client requires of a result and a
// server speaking 2025-11-25 does not write: resultType, and on list and
// read results the caching hints (ttlMs 0 and cacheScope "private":
// always revalidate, never share, mcp-go's defaults).
func modernResult(raw json.RawMessage, cacheable bool) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) < 2 || t[0] != '{' || !rawjson.Valid(t) {
		return raw
	}
	var add []byte
	if !hasMember(t, "resultType") {
		add = append(add, `"resultType":"complete",`...)
	}
	if cacheable && !hasMember(t, "ttlMs") {
		add = append(add, `"ttlMs":0,`...)
	}
	if cacheable && !hasMember(t, "cacheScope") {
		add = append(add, `"cacheScope":"private",`...)
	}
	if len(add) == 0 {
		return raw
	}
	inner := bytes.TrimSpace(t[1:])
	if inner[0] == '}' {
		add = add[:len(add)-1]
	}
	return append(append([]byte{'{'}, add...), inner...)
}
