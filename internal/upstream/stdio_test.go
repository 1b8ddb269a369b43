package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// The stdio transport is tested against this test binary run as a small
// MCP server (TestMain switches on TW_FAKE_SERVER): raw JSON-RPC lines,
// answers out of order, garbage, crashes, errors and a request of its own.
// The e2e tests run it against real servers.

func TestMain(m *testing.M) {
	if os.Getenv("TW_FAKE_SERVER") == "1" {
		fakeServer()
		return
	}
	os.Exit(m.Run())
}

func fakeServer() {
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		out.Write(append(b, '\n'))
		out.Flush()
		mu.Unlock()
	}
	raw := func(s string) {
		mu.Lock()
		out.WriteString(s + "\n")
		out.Flush()
		mu.Unlock()
	}
	result := func(id json.RawMessage, v any) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": v})
	}
	text := func(s string) any { return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}} }
	var cancelled, subscribed []string
	pongs := make(chan json.RawMessage, 1)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Params struct {
				Name      string `json:"name"`
				Arguments struct {
					Message string `json:"message"`
					MS      int    `json:"ms"`
				} `json:"arguments"`
				RequestID json.RawMessage `json:"requestId"`
				URI       string          `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			result(m.ID, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{"listChanged": true},
				"prompts": map[string]any{}, "resources": map[string]any{"subscribe": true}},
				"serverInfo": map[string]any{"name": "fake", "version": "1"}, "instructions": "a fake server"})
		case "tools/list":
			result(m.ID, map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}})
		case "prompts/list": // odd spacing and key order, to see it relayed as written
			raw(`{"id":` + string(m.ID) + `, "result" : {"prompts":[ {"name":"p","x":1} ],"nextCursor":"c2"},"jsonrpc":"2.0"}`)
		case "prompts/get":
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32602, "message": "no prompt " + m.Params.Name}})
		case "resources/subscribe":
			mu.Lock()
			subscribed = append(subscribed, m.Params.URI)
			mu.Unlock()
			result(m.ID, map[string]any{})
			send(map[string]any{"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": map[string]any{"uri": m.Params.URI}})
		case "notifications/cancelled":
			mu.Lock()
			cancelled = append(cancelled, string(m.Params.RequestID))
			mu.Unlock()
		case "":
			if m.Result != nil { // the client's answer to our ping
				pongs <- m.ID
			}
		case "tools/call":
			a := m.Params.Arguments
			switch m.Params.Name {
			case "echo":
				result(m.ID, text(a.Message))
			case "slow":
				go func(id json.RawMessage) {
					time.Sleep(time.Duration(a.MS) * time.Millisecond)
					result(id, text("slept"))
				}(m.ID)
			case "crash":
				os.Exit(3)
			case "fail":
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32000, "message": "nope", "data": map[string]any{"x": 1}}})
			case "garbage":
				raw("not JSON")
				raw(`{"jsonrpc":"2.0","id":"nobody-asked","result":{}}`)
				raw(`{"truncated":`)
				raw(`[1,2,3]`)
				result(m.ID, text("after garbage"))
			case "subscribed":
				mu.Lock()
				uris := strings.Join(subscribed, ",")
				mu.Unlock()
				result(m.ID, text(uris))
			case "cancelled":
				mu.Lock()
				ids := strings.Join(cancelled, ",")
				mu.Unlock()
				result(m.ID, text(ids))
			case "ping_me":
				go func(id json.RawMessage) {
					send(map[string]any{"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
					select {
					case got := <-pongs:
						result(id, text("pong "+string(got)))
					case <-time.After(5 * time.Second):
						result(id, text("no pong"))
					}
				}(m.ID)
			}
		default:
			if len(m.ID) > 0 && !strings.HasPrefix(m.Method, "notifications/") {
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
			}
		}
	}
}

func fake(t *testing.T, timeout time.Duration) *Client {
	t.Helper()
	c := New(serverspec.Spec{Name: "fake", Command: os.Args[0], Env: append(os.Environ(), "TW_FAKE_SERVER=1"), ToolTimeout: timeout, StartupTimeout: 10 * time.Second}, "test", nil)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if n := len(c.Tools()); n != 1 || c.Instructions() != "a fake server" {
		t.Fatalf("tools %d, instructions %q", n, c.Instructions())
	}
	return c
}

func callText(t *testing.T, c *Client, name, args string) string {
	t.Helper()
	raw, err := c.Call(context.Background(), name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("%s: result %s", name, raw)
	}
	return r.Content[0].Text
}

// Answers find their calls by id, in whatever order they come, and a
// result is handed over as the server wrote it.
func TestStdioRoutesAnswersByID(t *testing.T) {
	t.Parallel()
	c := fake(t, time.Minute)
	type got struct {
		raw string
		err error
		at  time.Time
	}
	slow, fast := make(chan got, 1), make(chan got, 1)
	c.Begin("slow", json.RawMessage(`{"ms":300}`), ReceiverFunc(func(r json.RawMessage, err error) { slow <- got{string(r), err, time.Now()} }))
	c.Begin("echo", json.RawMessage(`{"message":"hi"}`), ReceiverFunc(func(r json.RawMessage, err error) { fast <- got{string(r), err, time.Now()} }))
	f, s := <-fast, <-slow
	if f.err != nil || f.raw != `{"content":[{"text":"hi","type":"text"}]}` {
		t.Fatalf("echo: %+v", f)
	}
	if s.err != nil || !strings.Contains(s.raw, "slept") || !s.at.After(f.at) {
		t.Fatalf("slow: %+v (echo at %v)", s, f.at)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			msg := fmt.Sprint("m", i)
			if got := callText(t, c, "echo", `{"message":"`+msg+`"}`); got != msg {
				t.Errorf("call %d got %q", i, got)
			}
		})
	}
	wg.Wait()
}

// Garbage on the server's output is skipped; the call still completes.
func TestStdioSkipsGarbage(t *testing.T) {
	t.Parallel()
	c := fake(t, time.Minute)
	if got := callText(t, c, "garbage", `{}`); got != "after garbage" {
		t.Fatal(got)
	}
	if got := callText(t, c, "echo", `{"message":"still here"}`); got != "still here" {
		t.Fatal(got)
	}
}

// A JSON-RPC error comes back as *RPCError with its code, message and data.
func TestStdioRPCError(t *testing.T) {
	t.Parallel()
	c := fake(t, time.Minute)
	_, err := c.Call(context.Background(), "fail", json.RawMessage(`{}`))
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32000 || rpc.Message != "nope" || string(rpc.Data) != `{"x":1}` {
		t.Fatalf("%#v", err)
	}
}

// A call past the tool timeout fails with ErrTimeout, and the server is
// told to stop (notifications/cancelled with the call's id).
func TestStdioTimeoutCancelsUpstream(t *testing.T) {
	t.Parallel()
	c := fake(t, 200*time.Millisecond)
	start := time.Now()
	if _, err := c.Call(context.Background(), "slow", json.RawMessage(`{"ms":5000}`)); !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the timeout took %s", d)
	}
	var got string
	for range 50 {
		if got = callText(t, c, "cancelled", `{}`); got != "" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.HasPrefix(got, `"tw-`) {
		t.Fatalf("cancelled ids: %q", got)
	}
}

// Cancel abandons a call at once (context.Canceled), and tells the server.
func TestStdioCancel(t *testing.T) {
	t.Parallel()
	c := fake(t, time.Minute)
	done := make(chan error, 1)
	pd := c.Begin("slow", json.RawMessage(`{"ms":5000}`), ReceiverFunc(func(_ json.RawMessage, err error) { done <- err }))
	pd.Cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Cancel did not end the call")
	}
	pd.Cancel() // again: nothing happens
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := c.Call(ctx, "slow", json.RawMessage(`{"ms":5000}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call with a cancelled context: %v", err)
	}
}

// A server that exits mid-call fails the call as a transport error (it may
// have run); the next call restarts it.
func TestStdioCrashRestarts(t *testing.T) {
	t.Parallel()
	c := fake(t, time.Minute)
	_, err := c.Call(context.Background(), "crash", json.RawMessage(`{}`))
	if !IsTransport(err) {
		t.Fatalf("err = %v", err)
	}
	if got := callText(t, c, "echo", `{"message":"back"}`); got != "back" {
		t.Fatal(got)
	}
}

// Requests the server sends (ping) are answered by mcp-go's client.
func TestStdioAnswersServerRequests(t *testing.T) {
	t.Parallel()
	c := fake(t, time.Minute)
	if got := callText(t, c, "ping_me", `{}`); got != `pong "srv-1"` {
		t.Fatal(got)
	}
}

// Invalid arguments never reach the server.
func TestStdioRefusesInvalidArguments(t *testing.T) {
	t.Parallel()
	c := fake(t, time.Minute)
	if _, err := c.Call(context.Background(), "echo", json.RawMessage(`{"message":`)); err == nil || IsTransport(err) {
		t.Fatalf("err = %v", err)
	}
	if got := callText(t, c, "echo", `{"message":"ok"}`); got != "ok" {
		t.Fatal(got)
	}
}

func TestParseCallID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]uint64{`"tw-1"`: 1, `"tw-18446744073709551615"`: 18446744073709551615} {
		if n, ok := parseCallID([]byte(in)); !ok || n != want {
			t.Errorf("parseCallID(%s) = %d %v", in, n, ok)
		}
	}
	for _, in := range []string{`"tw-"`, `"tw-1x"`, `"TW-1"`, `1`, `"tw-1`, `"tw-\u0031"`, `"tw-99999999999999999999"`} {
		if _, ok := parseCallID([]byte(in)); ok {
			t.Errorf("parseCallID(%s) = ok", in)
		}
	}
}
