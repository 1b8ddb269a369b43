package e2e

import (
	"strings"
	"testing"
	"time"
)

// The client's stream has one reader. Before, the first message was read
// for its capabilities by a reader that folds case, before the message
// was judged: an initialize refused for a "Params" beside its "params"
// still told the upstream what "Params" claimed, and the upstream then
// asked the client for roots it never declared. Through the binary: the
// refused message tells the server nothing, and the server, asking for
// roots, learns the client has none.
func TestARefusedFirstMessageTellsTheServerNothing(t *testing.T) {
	t.Parallel()
	c := startRaw(t, twBin, wrapArgs(t, "ts", nil, testServer, "-state", t.TempDir())...)
	hello := func(caps string) string {
		return `{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"clientInfo":{"name":"raw","version":"1"}}`
	}
	m := c.sendAwait(`"smuggled"`, `{"jsonrpc":"2.0","id":"smuggled","method":"initialize","params":`+hello(`{}`)+`,"Params":`+hello(capableClient)+`}`)
	if m.Error == nil || m.Error.Code != -32600 {
		t.Fatalf("an initialize with params and Params: %s", m.Line)
	}
	c.initialize(`{}`)
	ch := c.expect(`"roots"`)
	c.send(`{"jsonrpc":"2.0","id":"roots","method":"tools/call","params":{"name":"roots","arguments":{}}}`)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case a := <-ch:
			if r := decodeCall(t, a); !r.IsError || !strings.Contains(r.Text, "roots/list failed") {
				t.Fatalf("the server was told of roots: %+v", r)
			}
			return
		case <-time.After(20 * time.Millisecond):
			c.mu.Lock()
			n := len(c.reqs)
			c.mu.Unlock()
			if n > 0 {
				t.Fatalf("the server asked the client %d questions: it was told the capabilities of a refused message", n)
			}
		case <-deadline:
			t.Fatal("no answer to the roots call within 30s")
		}
	}
}
