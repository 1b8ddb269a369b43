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
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// regionSchema marks the region argument x-mcp-header: a 2026-07-28
// client mirrors it in Mcp-Param-Region, and a server must check the two
// agree.
const regionSchema = `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`

// headerUpstream is a real mcp-go streamable HTTP server whose one tool
// takes a header-mirrored argument; it counts the calls it ran.
func headerUpstream(t *testing.T, ran *int) string {
	t.Helper()
	up := server.NewMCPServer("regions", "1", server.WithToolCapabilities(true))
	up.AddTool(mcp.NewToolWithRawSchema("where", "says the region", json.RawMessage(regionSchema)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			*ran++
			return mcp.NewToolResultText("region=" + req.GetString("region", "")), nil
		})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(up))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// modernCall posts a 2026-07-28 tools/call of up__where with region in
// the body and the given Mcp-Param-Region header ("": none).
func modernCall(t *testing.T, url, region, header string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "up__where", "arguments": map[string]any{"region": region},
		"_meta": map[string]any{mcp.MetaKeyProtocolVersion: mcp.ProtocolVersion20260728, mcp.MetaKeyClientCapabilities: map[string]any{}},
	}})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20260728)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "up__where")
	if header != "" {
		req.Header.Set("Mcp-Param-Region", header)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// An argument an upstream tool marks x-mcp-header is listed with its
// annotation, and a 2026-07-28 call whose Mcp-Param-* header disagrees
// with the body, or lacks it, is refused before it is decided or run.
func TestAParamHeaderThatDisagreesWithTheBodyIsRefusedBeforeTheCall(t *testing.T) {
	t.Parallel()
	ran := 0
	spec := serverspec.Spec{Name: "up", URL: headerUpstream(t, &ran)}
	s := New(testhost.New(t, "[apps.up.tools.where]\napproval_mode = \"approve\"\n", host.Defaults()), []serverspec.Spec{spec}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	front := httptest.NewServer(s.MCPHandler())
	t.Cleanup(front.Close)
	if rt := s.route("up__where"); rt == nil || !strings.Contains(string(rt.def.RawInputSchema), `"x-mcp-header":"Region"`) {
		t.Fatalf("the listed definition lost the x-mcp-header annotation: %+v", rt)
	}
	for name, header := range map[string]string{"another value": "us-east", "no header": ""} {
		status, body := modernCall(t, front.URL, "eu-west", header)
		if status != http.StatusBadRequest || !strings.Contains(body, "Mcp-Param-Region") || ran != 0 {
			t.Errorf("%s: status %d, ran %d: %s", name, status, ran, body)
		}
	}
	if status, body := modernCall(t, front.URL, "eu-west", "eu-west"); status != http.StatusOK || !strings.Contains(body, "region=eu-west") || ran != 1 {
		t.Fatalf("matching header: status %d, ran %d: %s", status, ran, body)
	}
}
