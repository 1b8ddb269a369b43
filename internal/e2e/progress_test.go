package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// A client that asks for progress on a call gets the server's progress
// notifications through wrap, carrying its own token, in order, before the
// result; progress the server sends for a token the call did not give
// (testserver sends one) never reaches the client.
func TestWrapRelaysProgress(t *testing.T) {
	for _, up := range []struct {
		name string
		cmd  func(t *testing.T) []string
		tool string
		args map[string]any
	}{
		{"testserver", func(t *testing.T) []string { return []string{testServer, "-state", t.TempDir()} },
			"progress", map[string]any{"steps": 3}},
		{"server-everything", func(t *testing.T) []string { return []string{npmServer(t, "mcp-server-everything")} },
			"trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3}},
	} {
		t.Run(up.name, func(t *testing.T) {
			args := append([]string{"wrap", "--quiet", "--app", "p", "--approvals", filepath.Join(t.TempDir(), "a.json"), "--"}, up.cmd(t)...)
			c := startGo(t, true, nil, twBin, args...)
			for _, token := range []mcp.ProgressToken{"tok-1", 42} {
				if steps := callWithProgress(t, c, up.tool, up.args, token); len(steps) != 3 || steps[0] != 1 || steps[1] != 2 || steps[2] != 3 {
					t.Errorf("token %v: progress %v, want 1, 2, 3", token, steps)
				}
			}
			// Without a token, the call works and nothing is relayed.
			req := mcp.CallToolRequest{}
			req.Params.Name = up.tool
			req.Params.Arguments = up.args
			if res, err := c.CallTool(testContext(t), req); err != nil || res.IsError {
				t.Fatalf("no token: %v %+v", err, res)
			}
			select {
			case n := <-c.notes:
				if n.Method == string(mcp.MethodNotificationProgress) {
					t.Errorf("progress relayed for a call without a token: %+v", n.Params)
				}
			case <-time.After(300 * time.Millisecond):
			}
		})
	}
}

// callWithProgress calls tool with a progress token and returns the
// progress values relayed for it; progress for any other token fails the
// test.
func callWithProgress(t *testing.T, c *goClient, tool string, args map[string]any, token mcp.ProgressToken) []float64 {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	req.Params.Meta = &mcp.Meta{ProgressToken: token}
	res, err := c.CallTool(testContext(t), req)
	if err != nil || res.IsError {
		t.Fatalf("%s, token %v: %v %+v\n%s", tool, token, err, res, c.log.String())
	}
	var steps []float64
	for {
		select {
		case n := <-c.notes:
			if n.Method != string(mcp.MethodNotificationProgress) {
				continue
			}
			got := n.Params.AdditionalFields["progressToken"]
			if want := token; got != want && !(isNumber(got) && isNumber(want) && toFloat(got) == toFloat(want)) {
				t.Errorf("token %v: progress for %v reached the client", token, got)
				continue
			}
			steps = append(steps, toFloat(n.Params.AdditionalFields["progress"]))
		case <-time.After(300 * time.Millisecond):
			return steps
		}
	}
}

// Progress also reaches the client from an HTTP upstream (proxy mode), and
// for a call that had to wait for its stdio server to restart.
func TestProxyRelaysProgressFromHTTPAndRestartingServers(t *testing.T) {
	t.Parallel()
	url := startHTTPTestServer(t)
	cfg := writeFile(t, "proxy.toml", fmt.Sprintf(`
[mcp_servers.local]
command = %q
args = ["-state", %q]

[mcp_servers.remote]
url = %q
`, testServer, t.TempDir(), url))
	c := startGo(t, true, nil, twBin, proxyArgs(t, cfg)...)
	want := []float64{1, 2, 3}
	if steps := callWithProgress(t, c, "remote__progress", map[string]any{"steps": 3}, "over-http"); !slices.Equal(steps, want) {
		t.Errorf("HTTP upstream: progress %v, want %v", steps, want)
	}
	if text, isErr := c.call(t, "local__crash", map[string]any{}); !isErr {
		t.Fatalf("crash: %s", text)
	}
	if steps := callWithProgress(t, c, "local__progress", map[string]any{"steps": 3}, 7); !slices.Equal(steps, want) {
		t.Errorf("restarted upstream: progress %v, want %v", steps, want)
	}
}

func isNumber(v any) bool {
	switch v.(type) {
	case float64, int:
		return true
	}
	return false
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	}
	return -1
}
