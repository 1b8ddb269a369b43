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
