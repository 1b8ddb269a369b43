package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// postModern posts a 2026-07-28 tools/call of up__touch with extra params
// and returns the result object.
func postModern(t *testing.T, url string, extra map[string]any) map[string]any {
	t.Helper()
	params := map[string]any{"name": "up__touch", "arguments": map[string]any{},
		"_meta": map[string]any{mcp.MetaKeyProtocolVersion: mcp.ProtocolVersion20260728, mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}}}}
	for k, v := range extra {
		params[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20260728)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "up__touch")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var msg struct {
		Result map[string]any `json:"result"`
	}
	if json.Unmarshal(b, &msg) != nil || msg.Result == nil {
		t.Fatalf("not a result (status %d): %s", resp.StatusCode, b)
	}
	return msg.Result
}

// A request state answered after its time to live is refused, and the
// call is not made.
func TestARequestStateRetriedAfterItExpiredIsRefused(t *testing.T) {
	t.Parallel()
	ran := 0
	up := server.NewMCPServer("up", "1", server.WithToolCapabilities(true))
	up.AddTool(mcp.NewTool("touch"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ran++
		return mcp.NewToolResultText("touched"), nil
	})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(up))
	t.Cleanup(ts.Close)
	h := testhost.New(t, "[apps.up]\ndefault_tools_approval_mode = \"prompt\"\n", host.Defaults())
	s := New(h, []serverspec.Spec{{Name: "up", URL: ts.URL + "/mcp"}}, Options{StateTTL: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	front := httptest.NewServer(s.MCPHandler())
	t.Cleanup(front.Close)

	retry := func(state any) map[string]any {
		return postModern(t, front.URL, map[string]any{"requestState": state, "inputResponses": map[string]any{
			channel.ElicitationID: map[string]any{"action": "accept", "content": map[string]any{"decision": "allow_once"}}}})
	}
	asked := postModern(t, front.URL, nil)
	if asked["resultType"] != "input_required" {
		t.Fatalf("not asked: %v", asked)
	}
	time.Sleep(300 * time.Millisecond)
	late := retry(asked["requestState"])
	text, _ := json.Marshal(late["content"])
	if late["isError"] != true || !strings.Contains(string(text), "expired") || ran != 0 {
		t.Fatalf("a retry after the state expired: %v (ran %d)", late, ran)
	}
	// In time, the same kind of answer runs the call.
	asked = postModern(t, front.URL, nil)
	if r := retry(asked["requestState"]); r["isError"] == true || ran != 1 {
		t.Fatalf("a retry in time: %v (ran %d)", r, ran)
	}
}
