package e2e

import (
	"strings"
	"testing"
	"time"
)

// Calls in flight at once are answered each under its own id, a fast one
// before a slow one; notifications/cancelled ends a call at once; and a
// client that goes away with calls in flight does not keep the proxy
// waiting for them.
func TestWrapCallsInFlight(t *testing.T) {
	t.Parallel()
	c := startRaw(t, twBin, "wrap", "--app", "ts", "--approvals", t.TempDir()+"/a.json",
		"--", testServer, "-state", t.TempDir())
	c.initialize("")

	slow, fast := c.expect(`"slow"`), c.expect(`"fast"`)
	c.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"slow","arguments":{"ms":400}}}`)
	c.send(`{"jsonrpc":"2.0","id":"fast","method":"tools/call","params":{"name":"echo","arguments":{"message":"first"}}}`)
	select {
	case m := <-fast:
		if r := decodeCall(t, m); r.IsError || r.Text != "echo: first" {
			t.Fatalf("fast: %+v", r)
		}
	case <-slow:
		t.Fatal("the slow call was answered before the fast one")
	case <-time.After(30 * time.Second):
		t.Fatal("no answer to the fast call")
	}
	if r := decodeCall(t, c.await(`"slow"`, slow)); r.IsError || r.Text != "slept" {
		t.Fatalf("slow: %+v", r)
	}

	t.Run("cancelled", func(t *testing.T) {
		ch := c.expect(`"c1"`)
		start := time.Now()
		c.send(`{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"slow","arguments":{"ms":20000}}}`)
		time.Sleep(100 * time.Millisecond)
		c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"user"}}`)
		r := decodeCall(t, c.await(`"c1"`, ch))
		if !r.IsError || !strings.Contains(r.Text, "canceled") {
			t.Fatalf("%+v", r)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("cancelling took %s", d)
		}
		if r := decodeCall(t, c.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "after"}})); r.IsError || r.Text != "echo: after" {
			t.Fatalf("after cancel: %+v", r)
		}
	})

	t.Run("client leaves mid-call", func(t *testing.T) {
		c.expect(`"left"`)
		c.send(`{"jsonrpc":"2.0","id":"left","method":"tools/call","params":{"name":"slow","arguments":{"ms":20000}}}`)
		time.Sleep(100 * time.Millisecond)
		start := time.Now()
		c.in.Close()
		select {
		case <-c.done:
		case <-time.After(15 * time.Second):
			t.Fatal("the proxy did not exit after its client left")
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("exiting took %s", d)
		}
	})
}
