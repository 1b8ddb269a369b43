package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Bad traffic from either side and a misbehaving upstream produce errors,
// never a hang or a crash, and the proxy keeps serving.
func TestWrapSurvivesMalformedTrafficAndFailures(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	c := startRaw(t, twBin, "wrap", "--app", "ts", "--approvals", t.TempDir()+"/a.json",
		"--tool-timeout", "500ms", "--max-arg-bytes", "65536",
		"--", testServer, "-garbage-at-start", "-state", state)
	c.initialize("")
	call := func(name string, args any) callResult {
		t.Helper()
		return decodeCall(t, c.call("tools/call", map[string]any{"name": name, "arguments": args}))
	}
	alive := func(step string) {
		t.Helper()
		if r := call("echo", map[string]any{"message": step}); r.IsError || r.Text != "echo: "+step {
			t.Fatalf("after %s the proxy does not serve: %+v", step, r)
		}
	}
	alive("garbage at upstream start")

	t.Run("garbage on the upstream's stdout mid-call", func(t *testing.T) {
		if r := call("garbage", map[string]any{}); r.IsError || r.Text != "answered after garbage" {
			t.Fatalf("%+v", r)
		}
		alive("garbage mid-call")
	})

	t.Run("garbage from the client", func(t *testing.T) {
		ids := []string{"null", `"x1"`, `"x2"`}
		waits := map[string]chan rawMessage{}
		for _, id := range ids {
			waits[id] = c.expect(id)
		}
		c.send("this is not JSON")
		c.send(`{"jsonrpc":"2.0","id":"x1","method":"tools/call","params":"not an object"}`)
		c.send(`{"jsonrpc":"2.0","id":"x2","method":"no/such/method"}`)
		for _, id := range ids {
			if m := c.await(id, waits[id]); m.Error == nil {
				t.Errorf("id %s: want a JSON-RPC error, got %s", id, m.Line)
			}
		}
		alive("client garbage")
	})

	t.Run("unknown tool", func(t *testing.T) {
		r := call("no_such_tool", map[string]any{})
		if !r.IsError || !strings.Contains(r.Text, "no_such_tool") {
			t.Fatalf("%+v", r)
		}
		alive("unknown tool")
	})

	t.Run("arguments that are not an object", func(t *testing.T) {
		r := call("echo", []int{1, 2})
		if !r.IsError {
			t.Fatalf("%+v", r)
		}
		alive("array arguments")
	})

	t.Run("oversized arguments", func(t *testing.T) {
		// Over the cap but under the line limit: refused by the handler.
		r := call("echo", map[string]any{"message": strings.Repeat("a", 70_000)})
		if !r.IsError || !strings.Contains(r.Text, "limit") {
			t.Fatalf("70 kB: %+v", r)
		}
		// Far over: refused by the reader without buffering the message;
		// the id is found at either end of the message.
		big := strings.Repeat("b", 3<<20)
		waits := map[string]chan rawMessage{`"big1"`: c.expect(`"big1"`), `"big2"`: c.expect(`"big2"`)}
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"big1","method":"tools/call","params":{"name":"echo","arguments":{"message":%q}}}`, big))
		c.send(fmt.Sprintf(`{"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}},"jsonrpc":"2.0","id":"big2"}`, big))
		for _, id := range []string{`"big1"`, `"big2"`} {
			m := c.await(id, waits[id])
			r := decodeCall(t, m)
			if !r.IsError || !strings.Contains(r.Text, "limit") {
				t.Fatalf("%s: %+v", id, r)
			}
		}
		alive("oversized arguments")
	})

	t.Run("tool timeout", func(t *testing.T) {
		start := time.Now()
		r := call("slow", map[string]any{"ms": 5000})
		if !r.IsError || !strings.Contains(r.Text, "did not answer within") {
			t.Fatalf("%+v", r)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("the timeout took %s", d)
		}
		alive("timeout")
	})

	t.Run("upstream exits mid-call", func(t *testing.T) {
		r := call("crash", map[string]any{})
		if !r.IsError || !strings.Contains(r.Text, "stopped") {
			t.Fatalf("%+v", r)
		}
		alive("crash (restarted)")
	})

	t.Run("idempotent tool is retried once after a crash", func(t *testing.T) {
		if r := call("flaky", map[string]any{}); r.IsError || r.Text != "flaky ok" {
			t.Fatalf("%+v", r)
		}
	})

	t.Run("non-idempotent tool is not retried", func(t *testing.T) {
		if r := call("flaky_write", map[string]any{}); !r.IsError {
			t.Fatalf("%+v", r)
		}
		if r := call("flaky_write", map[string]any{}); r.IsError || r.Text != "flaky_write ok" {
			t.Fatalf("second call: %+v", r)
		}
	})

	t.Run("crash loop backs off", func(t *testing.T) {
		if r := call("crash", map[string]any{}); !r.IsError {
			t.Fatalf("%+v", r)
		}
		if r := call("crash", map[string]any{}); !r.IsError {
			t.Fatalf("%+v", r)
		}
		r := call("echo", map[string]any{"message": "too soon"})
		if !r.IsError || !strings.Contains(r.Text, "retries starting it in") {
			t.Fatalf("want a backoff error, got %+v", r)
		}
		time.Sleep(1200 * time.Millisecond)
		alive("backoff")
	})
}

// expect registers interest in the response with this raw id; send the
// request after, then await.
func (c *rawClient) expect(id string) chan rawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan rawMessage, 1)
	c.wait[id] = ch
	return ch
}

func (c *rawClient) await(id string, ch chan rawMessage) rawMessage {
	c.t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no answer to id %s", id)
	}
	return rawMessage{}
}
