package upstream

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A server's request whose id MCP does not allow is answered with -32600
// and a null id (it cannot be correlated, but it is not left hanging), and
// asks the client nothing.
func TestServerRequestsWithIDsMCPDoesNotAllowAreRefused(t *testing.T) {
	t.Parallel()
	asked := make(chan string, 8)
	s, out := serverRequestTransport(func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *RPCError) {
		asked <- string(params)
		return json.RawMessage(`{"roots":[]}`), nil
	})
	for _, id := range []string{`1.5`, `2.0`, `true`, `{"a":1}`, `9007199254740993`} {
		s.handle([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"roots/list","params":{"id":` + id + `}}`))
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"roots/list: the id is not a string or an integer (MCP request ids are strings or integers)"}}` + "\n"
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(out.String(), want) < 5 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := strings.Count(out.String(), want); got != 5 {
		t.Fatalf("%d refusals, want 5:\n%s", got, out.String())
	}
	if len(asked) > 0 {
		t.Fatalf("the client was asked for %s", <-asked)
	}
}

// The server's notifications/cancelled ends only the request whose id has
// the same JSON type and value: "7" is not 7.
func TestServerCancellationNamesItsRequestByExactID(t *testing.T) {
	t.Parallel()
	started, finished := make(chan string, 2), make(chan string, 2)
	s, _ := serverRequestTransport(func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *RPCError) {
		started <- string(params)
		<-ctx.Done()
		finished <- string(params)
		return nil, nil
	})
	s.handle([]byte(`{"jsonrpc":"2.0","id":7,"method":"roots/list","params":{"n":7}}`))
	<-started
	s.handle([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}`))
	s.handle([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7.5}}`))
	select {
	case got := <-finished:
		t.Fatalf("request %s was ended by a cancellation naming another id", got)
	case <-time.After(50 * time.Millisecond):
	}
	s.handle([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`))
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("the cancellation naming request 7 did not end it")
	}
}

// A server's answer nested deeper than any Go reader reads ends its
// request with an error at once (not at the tool timeout); a request that
// deep gets an error with its id.
func TestTooDeepLinesFromTheServerAreAnswered(t *testing.T) {
	t.Parallel()
	s, out := serverRequestTransport(func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *RPCError) {
		t.Error("a too-deep request reached the client")
		return nil, nil
	})
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	w := make(respWaiter, 1)
	key, _ := idKey([]byte(`5`))
	s.mu.Lock()
	s.waiting = map[string]waiter{key: w}
	s.mu.Unlock()
	s.handle([]byte(`{"jsonrpc":"2.0","id":5,"result":{"content":` + deep + `}}`))
	select {
	case r := <-w:
		if r.err != nil || r.resp == nil || r.resp.Error == nil || !strings.Contains(r.resp.Error.Message, "nested deeper") {
			t.Fatalf("the waiting request got %+v", r)
		}
	default:
		t.Fatal("the waiting request was left waiting")
	}
	s.handle([]byte(`{"jsonrpc":"2.0","id":"r9","method":"roots/list","params":` + deep + `}`))
	out.waitFor(t, `{"jsonrpc":"2.0","id":"r9","error":{"code":-32600,"message":"toolwarden: the request is nested deeper than 10000 levels, which toolwarden does not read"}}`+"\n")
}
