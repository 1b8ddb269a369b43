package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/internal/proxy"
	"github.com/toolwarden/toolwarden/internal/toolresult"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// A call to a tool of an upstream that has not started (or failed to)
// has no route, and mcp-go would answer it with a bare "tool not found"
// protocol error. As proxy does, serve answers it with a tool error that
// names the server, says it is starting or down, and to retry. mcp-go
// looks tools up by the exact name in the body, so such a call is renamed
// to unstartedTool, a tool registered with mcp-go but never listed (the
// list is rebuilt from the routes) and whose handler never calls anything;
// the name the caller sent travels in the context.

// unstartedTool is the name a call to an unstarted server's tool is given.
// It has no proxy.Separator, so no route can ever take it.
const unstartedTool = "toolwarden-unstarted-server"

type calledNameKey struct{}

// unstartedServer is the upstream whose tool name is, when it has no
// route because that upstream is not up and lists no tools; else nil.
func (s *Server) unstartedServer(name string) *upstream.Client {
	if s.route(name) != nil {
		return nil
	}
	for _, u := range s.upstreams() {
		if !strings.HasPrefix(name, u.Name()+proxy.Separator) {
			continue
		}
		if _, up := u.Capabilities(); !up && len(u.Tools()) == 0 {
			return u
		}
	}
	return nil
}

// anyUnstarted reports whether some upstream is not up and lists no
// tools, so that while every one is up a request is not parsed again.
func (s *Server) anyUnstarted() bool {
	for _, u := range s.upstreams() {
		if _, up := u.Capabilities(); !up && len(u.Tools()) == 0 {
			return true
		}
	}
	return false
}

// redirectUnstarted renames a tools/call to an unstarted server's tool to
// unstartedTool, in the body and the Mcp-Name header. A request whose
// headers disagree with its body is left for mcp-go to refuse.
func (s *Server) redirectUnstarted(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || !s.anyUnstarted() {
			next.ServeHTTP(w, r)
			return
		}
		data, err := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(data))
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		if renamed, name, ok := s.renameUnstarted(r.Header, data); ok {
			r = r.WithContext(context.WithValue(r.Context(), calledNameKey{}, name))
			r.Body = io.NopCloser(bytes.NewReader(renamed))
			r.ContentLength = int64(len(renamed))
			if r.Header.Get(mcp.HeaderName) != "" {
				r.Header.Set(mcp.HeaderName, unstartedTool)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// renameUnstarted returns body with params.name set to unstartedTool when
// it is a tools/call of an unstarted server's tool.
func (s *Server) renameUnstarted(h http.Header, data []byte) ([]byte, string, bool) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(data, &msg) != nil {
		return nil, "", false
	}
	var method string
	if json.Unmarshal(msg["method"], &method) != nil || method != string(mcp.MethodToolsCall) {
		return nil, "", false
	}
	var params map[string]json.RawMessage
	var name string
	if json.Unmarshal(msg["params"], &params) != nil || json.Unmarshal(params["name"], &name) != nil {
		return nil, "", false
	}
	if s.unstartedServer(name) == nil {
		return nil, "", false
	}
	if mcp.ValidateStandardHeaders(h.Get, h.Get(mcp.HeaderProtocolVersion), mcp.MethodToolsCall, msg["params"]) != nil {
		return nil, "", false
	}
	params["name"], _ = json.Marshal(unstartedTool)
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	return out, name, err == nil
}

// unstartedServerTool is registered with mcp-go beside the routes.
func (s *Server) unstartedServerTool() server.ServerTool {
	return server.ServerTool{
		Tool:    mcp.Tool{Name: unstartedTool, RawInputSchema: json.RawMessage(`{"type":"object"}`)},
		Handler: s.callUnstarted,
	}
}

// callUnstarted answers a renamed call: never forwarded, whatever the
// state of the server by now.
func (s *Server) callUnstarted(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, _ := ctx.Value(calledNameKey{}).(string)
	if name == "" {
		// Called by its own name: it is no tool of any server.
		return toolresult.Error("toolwarden: there is no tool %q.", req.Params.Name), nil
	}
	if _, err := s.callerOf(ctx, req.Params.Meta); err != nil {
		return toolresult.Error("toolwarden: %v; %s was not called.", err, name), nil
	}
	tracedFrom(ctx).fail("unavailable")
	u := s.unstartedServer(name)
	switch {
	case u == nil:
		return toolresult.Error("toolwarden: %s was not called: its MCP server has just started; list the tools again, then retry.", name), nil
	case u.Err() == nil:
		return toolresult.Error("toolwarden: %s was not called: MCP server %q is still starting. Retry in a few seconds.", name, u.Name()), nil
	}
	retry := "toolwarden keeps trying to start it"
	if d := u.RetryIn(); d > 0 {
		retry = fmt.Sprintf("toolwarden tries again in %s", d.Round(time.Second))
	}
	return toolresult.Error("toolwarden: %s was not called: MCP server %q is down (it could not start; the cause is in toolwarden serve's log). %s; retry then.", name, u.Name(), retry), nil
}
