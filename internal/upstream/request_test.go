package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// A request's result reaches the caller as the server wrote it, and a
// JSON-RPC error as the server's code and message.
func TestRequestRelaysResultAsWritten(t *testing.T) {
	t.Parallel()
	c := fake(t, time.Minute)
	caps, ok := c.Capabilities()
	if !ok || caps.Prompts == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Completions != nil {
		t.Fatalf("capabilities %+v (connected %v)", caps, ok)
	}
	raw, err := c.Request(context.Background(), "prompts/list", nil)
	if err != nil || string(raw) != `{"prompts":[ {"name":"p","x":1} ],"nextCursor":"c2"}` {
		t.Fatalf("prompts/list: %s %v", raw, err)
	}
	_, err = c.Request(context.Background(), "prompts/get", json.RawMessage(`{"name":"zz","arguments":{"a":"b"}}`))
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != -32602 || rpc.Message != "no prompt zz" {
		t.Fatalf("prompts/get: %#v", err)
	}
	if _, err := c.Request(context.Background(), "prompts/get", json.RawMessage(`{"name":`)); err == nil || IsTransport(err) {
		t.Fatalf("invalid params: %v", err)
	}
	if got := callText(t, c, "echo", `{"message":"still up"}`); got != "still up" {
		t.Fatal(got)
	}
}

// notes records what OnNotify hands over.
type notes struct {
	mu  sync.Mutex
	got []string
}

func (n *notes) add(_ *Client, method string, params json.RawMessage) {
	n.mu.Lock()
	n.got = append(n.got, method+" "+string(params))
	n.mu.Unlock()
}

func (n *notes) count(s string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := 0
	for _, g := range n.got {
		if g == s {
			k++
		}
	}
	return k
}

// The server's resource notifications reach OnNotify, every connection
// announces that the prompt and resource lists may have changed, and a
// subscription outlives a restart of the server.
func TestSubscriptionSurvivesRestart(t *testing.T) {
	t.Parallel()
	var n notes
	c := New(serverspec.Spec{Name: "fake", Command: os.Args[0], Env: append(os.Environ(), "TW_FAKE_SERVER=1"), StartupTimeout: 10 * time.Second}, "test", nil)
	c.OnNotify(n.add)
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	promptsChanged, resourcesChanged := mcp.MethodNotificationPromptsListChanged+" ", mcp.MethodNotificationResourcesListChanged+" "
	if n.count(promptsChanged) != 1 || n.count(resourcesChanged) != 1 {
		t.Fatalf("after the start: %v", n.got)
	}
	if raw, err := c.Subscribe(ctx, "x://a", nil); err != nil || string(raw) != `{}` {
		t.Fatalf("subscribe: %s %v", raw, err)
	}
	if !c.Subscribed("x://a") {
		t.Fatal("x://a is not remembered")
	}
	updated := mcp.MethodNotificationResourceUpdated + ` {"uri":"x://a"}`
	eventually(t, func() bool { return n.count(updated) == 1 })

	if _, err := c.Call(ctx, "crash", json.RawMessage(`{}`)); !IsTransport(err) {
		t.Fatalf("crash: %v", err)
	}
	callText(t, c, "echo", `{"message":"restart"}`)
	eventually(t, func() bool { return callText(t, c, "subscribed", `{}`) == "x://a" })
	if n.count(promptsChanged) != 2 || n.count(resourcesChanged) != 2 {
		t.Fatalf("after the restart: %v", n.got)
	}

	if _, err := c.Unsubscribe(ctx, "x://a", nil); err == nil {
		t.Fatal("the fake server has no unsubscribe; want its error")
	}
	if c.Subscribed("x://a") {
		t.Fatal("x://a is still remembered after unsubscribe")
	}
	if !slices.Contains(n.got, updated) {
		t.Fatal(n.got)
	}
}

func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
