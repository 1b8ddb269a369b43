package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// Requests a server makes of its client (sampling, elicitation, roots) and
// its log messages, for a proxy that relays them to its own client: the
// server is told the capabilities that client has (SetClientCapabilities),
// so it behaves as it would without the proxy, and what it asks for is
// handed to a ServerRequestFunc raw.

// ServerRequestFunc answers a request a server sent its client: method is
// sampling/createMessage, elicitation/create or roots/list, params its
// params as the server wrote them (nil when absent). It returns the raw
// result, or an error for the server. ctx ends when the server cancels the
// request (notifications/cancelled) or its connection ends; the answer is
// then not sent. It runs on a goroutine of its own.
type ServerRequestFunc func(ctx context.Context, c *Client, method string, params json.RawMessage) (json.RawMessage, *RPCError)

// relayedRequests are the server-to-client requests a ServerRequestFunc
// gets. ping stays with mcp-go, which answers it.
var relayedRequests = map[string]bool{
	string(mcp.MethodSamplingCreateMessage): true,
	string(mcp.MethodElicitationCreate):     true,
	string(mcp.MethodListRoots):             true,
}

// OnServerRequest sets f to answer the requests the server makes of its
// client. Set it, and SetClientCapabilities, before the client starts.
// A stdio server's requests reach f with their params as written; an HTTP
// server's with params re-encoded by mcp-go, and mcp-go's HTTP transport
// gives each at most 30 s.
func (c *Client) OnServerRequest(f ServerRequestFunc) { c.onServerRequest = f }

// SetClientCapabilities sets the capabilities the server is told its
// client has, from the proxy's own client: roots, sampling and
// elicitation, each only if OnServerRequest is set (something must answer
// them) and Spec.ClientCapabilities allows it. It applies from the next
// (re)start of the server; set it before the first.
func (c *Client) SetClientCapabilities(caps mcp.ClientCapabilities) {
	told := mcp.ClientCapabilities{Roots: caps.Roots, Sampling: caps.Sampling, Elicitation: caps.Elicitation}
	if allowed := c.spec.ClientCapabilities; allowed != nil {
		if !slices.Contains(allowed, "roots") {
			told.Roots = nil
		}
		if !slices.Contains(allowed, "sampling") {
			told.Sampling = nil
		}
		if !slices.Contains(allowed, "elicitation") {
			told.Elicitation = nil
		}
	}
	c.mu.Lock()
	c.clientCaps = told
	c.mu.Unlock()
}

// declaredCapabilities are the capabilities the handshake declares.
func (c *Client) declaredCapabilities() mcp.ClientCapabilities {
	if c.onServerRequest == nil {
		return mcp.ClientCapabilities{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clientCaps
}

// SetLogLevel asks the server to send log messages (notifications/message,
// see OnNotify) at level and above: now, if it is up and offers logging,
// and again each time it restarts. level is one of the eight syslog
// levels MCP names.
func (c *Client) SetLogLevel(ctx context.Context, level mcp.LoggingLevel) error {
	c.mu.Lock()
	c.logLevel = level
	cn := c.conn
	c.mu.Unlock()
	if cn == nil || cn.dead.Load() || cn.caps.Logging == nil {
		return nil
	}
	return c.sendLogLevel(ctx, cn, level)
}

func (c *Client) sendLogLevel(ctx context.Context, cn *conn, level mcp.LoggingLevel) error {
	_, err := c.send(ctx, cn, string(mcp.MethodSetLogLevel), map[string]any{"level": level})
	return err
}

// restoreLogLevel tells a server that just (re)started the level its
// client asked for.
func (c *Client) restoreLogLevel(cn *conn) {
	c.mu.Lock()
	level := c.logLevel
	c.mu.Unlock()
	if level == "" || cn.caps.Logging == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.spec.StartupTimeoutOrDefault())
	defer cancel()
	if err := c.sendLogLevel(ctx, cn, level); err != nil {
		c.log.Warn("setting the log level after a start failed", "server", c.spec.Name, "err", err)
	}
}

// NotifyServer sends the server a notification from its client (such as
// notifications/roots/list_changed), if it is up.
func (c *Client) NotifyServer(ctx context.Context, method string) error {
	cn := c.live.Load()
	if cn == nil || cn.dead.Load() {
		return nil
	}
	return cn.tr.SendNotification(ctx, mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{Method: method}})
}

// serverRequest serves a request from the server (its method, raw id and
// params, views of the reader's buffer) that a ServerRequestFunc answers
// (see relayedRequests); it reports false for any other.
func (s *stdioTransport) serverRequest(m string, id, params []byte) bool {
	h := s.onServerRequest
	if h == nil || !relayedRequests[m] {
		return false
	}
	// Keyed by exact JSON type and value (rawjson.IDKey: "2" is not 2,
	// and 2.0 is no MCP id), so that the server's notifications/cancelled
	// ends only the request it names.
	key, ok := rawjson.IDKey(id)
	if !ok {
		_ = s.write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"%s: the id is not a string or an integer (MCP request ids are strings or integers)"}}`+"\n", mcp.INVALID_REQUEST, m))
		return true
	}
	if !declares(s.declared, m) {
		_ = s.write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"%s: the client did not declare this capability"}}`+"\n", id, mcp.METHOD_NOT_FOUND, m))
		return true
	}
	id, params = clone(id), clone(params)
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	if s.closed != nil {
		s.mu.Unlock()
		cancel()
		return true
	}
	if s.asked == nil {
		s.asked = map[string]context.CancelFunc{}
	}
	if prev := s.asked[key]; prev != nil {
		prev() // the server reused an id: the older request is abandoned
	}
	s.asked[key] = cancel
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			if s.asked != nil {
				delete(s.asked, key)
			}
			s.mu.Unlock()
			cancel()
		}()
		res, rpcErr := h(ctx, m, params)
		if ctx.Err() != nil {
			return // cancelled by the server, or the connection ended
		}
		var line []byte
		if rpcErr != nil {
			e, err := json.Marshal(struct {
				Code    int             `json:"code"`
				Message string          `json:"message"`
				Data    json.RawMessage `json:"data,omitempty"`
			}{rpcErr.Code, rpcErr.Message, validOrNil(rpcErr.Data)})
			if err != nil {
				e = fmt.Appendf(nil, `{"code":%d,"message":"cannot encode the error"}`, mcp.INTERNAL_ERROR)
			}
			line = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":%s}`+"\n", id, e)
		} else {
			if !rawjson.Valid(res) {
				res = json.RawMessage(`{}`)
			}
			line = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, oneLine(res))
		}
		_ = s.write(line)
	}()
	return true
}

// tooDeep handles a well-formed line from the server nested deeper than
// rawjson.MaxDepth, which no Go reader on the path reads: an answer ends
// its request with an error (instead of leaving the call to its timeout),
// a request gets an error, anything else is dropped. Its id is read from
// the top level, without reading the rest.
func (s *stdioTransport) tooDeep(line []byte) {
	msg, ok := rawjson.ReadMessage(line)
	why := fmt.Sprintf("nested deeper than %d levels, which toolwarden does not read", rawjson.MaxDepth)
	switch {
	case !ok || msg.ID == nil || !rawjson.IsID(msg.ID):
		s.log.Warn("dropped a message from the server", "why", "it is "+why)
	case msg.Method != nil:
		_ = s.write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":"toolwarden: the request is %s"}}`+"\n", msg.ID, mcp.INVALID_REQUEST, why))
	default:
		s.mu.Lock()
		w := s.take(msg.ID)
		s.mu.Unlock()
		if w != nil {
			e := fmt.Appendf(nil, `{"code":%d,"message":"toolwarden: the server's answer is %s"}`, mcp.INTERNAL_ERROR, why)
			w.answer(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":%s}`, msg.ID, e), nil, e, nil)
		}
	}
}

// declares reports whether caps declare what method needs.
func declares(caps mcp.ClientCapabilities, method string) bool {
	switch method {
	case string(mcp.MethodSamplingCreateMessage):
		return caps.Sampling != nil
	case string(mcp.MethodElicitationCreate):
		return caps.Elicitation != nil
	case string(mcp.MethodListRoots):
		return caps.Roots != nil
	}
	return false
}

// httpServerRequest answers an HTTP server's requests: ping here, those a
// ServerRequestFunc answers (see relayedRequests) if the handshake declared
// their capability, nothing else.
func (c *Client) httpServerRequest(declared mcp.ClientCapabilities) transport.RequestHandler {
	return func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		switch {
		case req.Method == string(mcp.MethodPing):
			return transport.NewJSONRPCResultResponse(req.ID, json.RawMessage(`{}`)), nil
		case !relayedRequests[req.Method]:
			return transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, req.Method+": not supported", nil), nil
		case !declares(declared, req.Method):
			return transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, req.Method+": the client did not declare this capability", nil), nil
		}
		var params json.RawMessage
		if req.Params != nil {
			b, err := json.Marshal(req.Params)
			if err != nil {
				return transport.NewJSONRPCErrorResponse(req.ID, mcp.INVALID_PARAMS, "cannot read the params", nil), nil
			}
			params = b
		}
		res, rpcErr := c.onServerRequest(ctx, c, req.Method, params)
		if rpcErr != nil {
			var data any
			if d := validOrNil(rpcErr.Data); d != nil {
				data = d
			}
			return transport.NewJSONRPCErrorResponse(req.ID, rpcErr.Code, rpcErr.Message, data), nil
		}
		if !rawjson.Valid(res) {
			res = json.RawMessage(`{}`)
		}
		return transport.NewJSONRPCResultResponse(req.ID, res), nil
	}
}

// cancelAsked ends the server's request with this raw id
// (notifications/cancelled from the server).
func (s *stdioTransport) cancelAsked(line []byte) {
	var n struct {
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &n) != nil {
		return
	}
	key, ok := rawjson.IDKey(n.Params.RequestID)
	if !ok {
		return
	}
	s.mu.Lock()
	cancel := s.asked[key]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

func validOrNil(b json.RawMessage) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return b
}

// oneLine returns valid raw JSON on one line (a stdio message must not
// span lines), compacting it only if it does.
func oneLine(raw []byte) []byte {
	if !bytes.ContainsAny(raw, "\r\n") {
		return raw
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, raw)
	return buf.Bytes()
}
