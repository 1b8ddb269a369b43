package serve

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/proxy"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// route is one downstream tool: <server>__<tool>, as toolwarden proxy
// names it, and the upstream tool behind it.
type route struct {
	name string
	up   *upstream.Client
	tool *host.Tool
	def  mcp.Tool // what a client is listed
}

// rebuild recomputes the routes from the upstreams' current tool lists and
// registers them with mcp-go, which tells every session the list changed.
func (s *Server) rebuild() {
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	routes := map[string]*route{}
	var tools []server.ServerTool
	for _, u := range s.upstreams() {
		for _, t := range u.Tools() {
			rt := &route{name: u.Name() + proxy.Separator + t.Name, up: u, tool: t}
			if _, dup := routes[rt.name]; dup {
				s.log.Warn("two tools share one name; keeping the first", "tool", rt.name, "server", u.Name())
				continue
			}
			rt.def = toolDefinition(rt.name, t.Raw)
			routes[rt.name] = rt
			tools = append(tools, server.ServerTool{Tool: rt.def, Handler: s.callTool})
		}
	}
	s.mu.Lock()
	s.routes = routes
	s.mu.Unlock()
	s.mcp.SetTools(append(tools, s.unstartedServerTool())...)
}

func (s *Server) route(name string) *route {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.routes[name]
}

// toolDefinition is the upstream's definition under the downstream name:
// its schemas kept byte for byte (mcp-go never parses them, and checks a
// 2026-07-28 client's Mcp-Param-* headers against the x-mcp-header
// annotations in them), the rest as mcp-go models a tool. A member that
// does not decode is left out rather than failing the tool.
func toolDefinition(name string, raw json.RawMessage) mcp.Tool {
	var d struct {
		Meta         json.RawMessage `json:"_meta"`
		Title        json.RawMessage `json:"title"`
		Description  json.RawMessage `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  json.RawMessage `json:"annotations"`
		Icons        json.RawMessage `json:"icons"`
	}
	t := mcp.Tool{Name: name, RawInputSchema: json.RawMessage(`{"type":"object"}`)}
	if json.Unmarshal(raw, &d) != nil {
		return t
	}
	_ = json.Unmarshal(d.Title, &t.Title)
	_ = json.Unmarshal(d.Description, &t.Description)
	if isObject(d.InputSchema) {
		t.RawInputSchema = d.InputSchema
	}
	if isObject(d.OutputSchema) {
		t.RawOutputSchema = d.OutputSchema
	}
	var ann mcp.ToolAnnotation
	if json.Unmarshal(d.Annotations, &ann) == nil {
		t.Annotations = ann
	}
	var icons []mcp.Icon
	if json.Unmarshal(d.Icons, &icons) == nil {
		t.Icons = icons
	}
	var meta mcp.Meta
	if isObject(d.Meta) && json.Unmarshal(d.Meta, &meta) == nil {
		t.Meta = &meta
	}
	return t
}

func isObject(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}

// filterList replaces mcp-go's tools/list answer with what this caller in
// this session may see (host.Filter: the visibility gate and plugins' list
// event), each upstream's tools in the upstream's order. A 2026-07-28
// answer is marked cacheScope "private" by mcp-go (its default, which the
// Server never changes): the list depends on who asks.
func (s *Server) filterList(ctx context.Context, _ any, req *mcp.ListToolsRequest, result *mcp.ListToolsResult) {
	if result == nil || req == nil {
		return
	}
	c, err := s.callerOf(ctx, req.Params.Meta)
	if err != nil {
		// Fail closed: a list for nobody in particular lists nothing.
		s.log.Warn("tools/list answered empty", "err", err)
		result.Tools = []mcp.Tool{}
		return
	}
	s.mu.RLock()
	routes := s.routes
	s.mu.RUnlock()
	tools := []mcp.Tool{}
	for _, u := range s.upstreams() {
		for _, t := range s.h.Filter(ctx, c.session, u.Name(), u.Tools()) {
			if rt := routes[u.Name()+proxy.Separator+t.Name]; rt != nil && rt.tool == t {
				tools = append(tools, rt.def)
			} else {
				tools = append(tools, toolDefinition(u.Name()+proxy.Separator+t.Name, t.Raw))
			}
		}
	}
	result.Tools = tools
	result.NextCursor = ""
}
