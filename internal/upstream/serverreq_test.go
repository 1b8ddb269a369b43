package upstream

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

// lines collects what the transport writes to the server.
type lines struct{ testkit.Buffer }

func (l *lines) Close() error { return nil }

func (l *lines) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(l.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the server was not sent %s; it got:\n%s", want, l.String())
		}
		time.Sleep(time.Millisecond)
	}
}

// A transport whose server declared roots and sampling (not elicitation)
// to the client, with handler h.
func serverRequestTransport(h func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *RPCError)) (*stdioTransport, *lines) {
	out := &lines{}
	s := newStdioTransport(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	s.stdin = out
	s.onServerRequest = h
	s.declared = mcp.ClientCapabilities{Roots: &struct {
		ListChanged bool `json:"listChanged,omitempty"`
	}{}, Sampling: &mcp.SamplingCapability{}}
	return s, out
}

func TestServerRequestsAreAnsweredByID(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	s, out := serverRequestTransport(func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *RPCError) {
		mu.Lock()
		seen = append(seen, method+" "+string(params))
		mu.Unlock()
		if method == string(mcp.MethodSamplingCreateMessage) {
			return nil, &RPCError{Code: -1, Message: "rejected", Data: json.RawMessage(`{"why":"test"}`)}
		}
		return json.RawMessage("{\n\"roots\": []\n}"), nil
	})
	s.handle([]byte(`{"jsonrpc":"2.0","id":"r1","method":"roots/list","params":null}`))
	out.waitFor(t, `{"jsonrpc":"2.0","id":"r1","result":{"roots":[]}}`+"\n")
	s.handle([]byte(`{"jsonrpc":"2.0","id":2,"method":"sampling/createMessage","params":{"maxTokens":1}}`))
	out.waitFor(t, `{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"rejected","data":{"why":"test"}}}`+"\n")
	// Not declared: refused without asking anyone.
	s.handle([]byte(`{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"?"}}`))
	out.waitFor(t, `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"elicitation/create: the client did not declare this capability"}}`)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(seen, "|") != `roots/list |sampling/createMessage {"maxTokens":1}` {
		t.Errorf("handler saw %q", seen)
	}
}

func TestServerRequestsEndWithTheirCancellationOrTheConnection(t *testing.T) {
	started, finished := make(chan string, 2), make(chan string, 2)
	s, out := serverRequestTransport(func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *RPCError) {
		started <- string(params)
		<-ctx.Done()
		finished <- string(params)
		return json.RawMessage(`{"roots":[]}`), nil
	})
	ended := func(want string) {
		t.Helper()
		select {
		case got := <-finished:
			if got != want {
				t.Fatalf("ended %s, want %s", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("request %s was not ended", want)
		}
	}
	s.handle([]byte(`{"jsonrpc":"2.0","id":5,"method":"roots/list","params":{"n":1}}`))
	<-started
	s.handle([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`))
	ended(`{"n":1}`)
	s.handle([]byte(`{"jsonrpc":"2.0","id":6,"method":"roots/list","params":{"n":2}}`))
	<-started
	s.end(errStopped)
	ended(`{"n":2}`)
	time.Sleep(20 * time.Millisecond) // an answer would be written right after
	if got := out.String(); got != "" {
		t.Errorf("a cancelled request was answered: %s", got)
	}
}
