package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The standalone GET stream of a streamable HTTP server.
//
// Protocol versions up to 2025-11-25, which the handshake negotiates (see
// dial), deliver what a server sends on its own (notifications/tools/
// list_changed, log messages, resource updates, and its requests to the
// client when no call is in flight) on a GET stream the client opens after
// the handshake. mcp-go opens it only behind its deprecated
// WithContinuousListening option, whose other effect (holding the
// connection to a legacy version) the handshake already has; 2026-07-28
// replaced the stream with subscriptions/listen (Client.Listen), which a
// legacy connection cannot use. So the client opens the stream itself:
// one GET with the session's headers, the events read as SSE, notifications
// handed to the same handler as mcp-go's, requests answered by POST.

// errNoGETStream: the server does not offer the stream (405, or 404 before
// it ever opened).
var errNoGETStream = errors.New("the server offers no GET stream")

// getRetry is the wait before reopening a stream that broke.
const getRetry = time.Second

// getStream is the GET stream of one HTTP connection.
type getStream struct {
	c       *Client
	cn      *conn
	tr      *transport.StreamableHTTP
	version string // negotiated protocol version
	handle  transport.RequestHandler
	http    *http.Client
}

// listen keeps the connection's GET stream open until ctx ends (the
// connection closes) or the server says it offers none.
func (g *getStream) listen(ctx context.Context) {
	opened := false
	for ctx.Err() == nil && !g.cn.dead.Load() {
		ok, err := g.open(ctx)
		opened = opened || ok
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, errNoGETStream) && !opened:
			g.c.log.Info("upstream offers no GET stream; its notifications arrive only during requests", "server", g.c.spec.Name)
			return
		case errors.Is(err, errNoGETStream):
			// It opened before: the server has forgotten the session. The
			// next request fails the same way and reconnects.
			g.c.log.Warn("upstream ended the session's GET stream", "server", g.c.spec.Name)
			return
		case err != nil:
			g.c.log.Warn("upstream GET stream broke; reopening", "server", g.c.spec.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(getRetry):
		}
	}
}

// header sets the headers every request of the session carries.
func (g *getStream) header(h http.Header) {
	if id := g.tr.GetSessionId(); id != "" {
		h.Set(transport.HeaderKeySessionID, id)
	}
	if g.version != "" {
		h.Set(transport.HeaderKeyProtocolVersion, g.version)
	}
	for k, v := range g.c.spec.Headers {
		h.Set(k, v)
	}
}

// open opens the stream once and reads it until it ends. ok reports
// whether the server accepted it.
func (g *getStream) open(ctx context.Context) (ok bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, g.c.spec.URL, nil)
	if err != nil {
		return false, err
	}
	g.header(req.Header)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := g.http.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusMethodNotAllowed, http.StatusNotFound:
		return false, errNoGETStream
	default:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return false, fmt.Errorf("GET answered %s: %s", resp.Status, bytes.TrimSpace(body))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return false, fmt.Errorf("GET answered with content type %q, not text/event-stream", resp.Header.Get("Content-Type"))
	}
	return true, readSSE(resp.Body, func(event, data string) {
		if event == "" || event == "message" {
			g.dispatch(ctx, []byte(data))
		}
	})
}

// readSSE calls f for each event of an SSE stream until it ends.
func readSSE(r io.Reader, f func(event, data string)) error {
	br := bufio.NewReader(r)
	var event, data strings.Builder
	hasData := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if hasData {
				f(event.String(), data.String())
			}
			event.Reset()
			data.Reset()
			hasData = false
		case strings.HasPrefix(line, "event:"):
			event.Reset()
			event.WriteString(strings.TrimSpace(line[len("event:"):]))
		case strings.HasPrefix(line, "data:"):
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(line[len("data:"):], " "))
			hasData = true
		}
	}
}

// dispatch routes one message of the stream: a notification to the
// client's handler, a request to g.handle (answered by POST). Answers do
// not come on this stream; anything else is skipped.
func (g *getStream) dispatch(ctx context.Context, msg []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method == "" {
		return
	}
	if len(m.ID) == 0 || string(m.ID) == "null" {
		var n mcp.JSONRPCNotification
		if json.Unmarshal(msg, &n) == nil {
			g.c.notification(g.cn, n)
		}
		return
	}
	var req transport.JSONRPCRequest
	if json.Unmarshal(msg, &req) != nil {
		return
	}
	// On its own goroutine: a relayed request can wait for a human.
	go func() {
		resp, err := g.handle(ctx, req)
		if err != nil {
			resp = transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil)
		}
		if resp != nil {
			g.respond(ctx, resp)
		}
	}()
}

// respond POSTs the answer to one of the server's requests.
func (g *getStream) respond(ctx context.Context, resp *transport.JSONRPCResponse) {
	body, err := json.Marshal(resp)
	if err != nil {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.c.spec.URL, bytes.NewReader(body))
	if err != nil {
		return
	}
	g.header(req.Header)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := g.http.Do(req)
	if err != nil {
		g.c.log.Warn("answering the upstream's request failed", "server", g.c.spec.Name, "err", err)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusAccepted {
		g.c.log.Warn("the upstream refused the answer to its request", "server", g.c.spec.Name, "status", res.Status)
	}
}

// pingOnly answers the requests of a server whose client relays nothing
// (no OnServerRequest): ping, and method not found for the rest.
func pingOnly(_ context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if req.Method == string(mcp.MethodPing) {
		return transport.NewJSONRPCResultResponse(req.ID, json.RawMessage(`{}`)), nil
	}
	return transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, req.Method+": not supported", nil), nil
}
