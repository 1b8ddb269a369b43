package e2e

import (
	"path/filepath"
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
				req := mcp.CallToolRequest{}
				req.Params.Name = up.tool
				req.Params.Arguments = up.args
				req.Params.Meta = &mcp.Meta{ProgressToken: token}
				res, err := c.CallTool(testContext(t), req)
				if err != nil || res.IsError {
					t.Fatalf("token %v: %v %+v\n%s", token, err, res, c.log.String())
				}
				var steps []float64
			drain:
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
						break drain
					}
				}
				if len(steps) != 3 || steps[0] != 1 || steps[1] != 2 || steps[2] != 3 {
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
