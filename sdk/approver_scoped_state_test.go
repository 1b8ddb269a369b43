package sdk_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/sdk"
)

// movingScoper asks about every write and proposes its current glob for
// remembering; widen changes the glob between the question and the
// answer, as a reloaded config or a plugin's own state can.
type movingScoper struct{ glob atomic.Value }

func (*movingScoper) Name() string               { return "moving-scoper" }
func (*movingScoper) Matches(app, t string) bool { return true }
func (*movingScoper) CanApprove() bool           { return false }
func (m *movingScoper) Check(_ context.Context, in *policy.CheckInput) policy.PluginVerdict {
	if in.Tool.Name != "write_file" {
		return policy.PluginVerdict{}
	}
	return policy.PluginVerdict{Verdict: policy.Ask, Code: "guarded", Reason: "path is guarded", Arguments: []string{"path"},
		Scopes: []policy.Scope{{Arg: "/path", Glob: m.glob.Load().(string)}}}
}

// A 2026-07-28 client answers by retrying the call with the request state
// the server minted. If the scopes on offer changed in between (the human
// was shown "path under /docs/**", the retry's decision would remember
// "/**"), the answer must not count: the human never approved the wider
// scope. Before the server bound the scopes into its request states, the
// retry ran and the session remembered "/**", so a later write to /etc
// ran unasked.
func TestAServerRefusesAScopedAnswerWhoseScopesChangedAfterTheHumanSawThem(t *testing.T) {
	t.Parallel()
	scoper := &movingScoper{}
	scoper.glob.Store("/docs/**")
	g := sdk.New(testhost.New(t, "[apps.fs]\ndestructive_enabled = true\n", host.Defaults().WithPlugin(scoper)))
	f := newFiles(g.ServerOption("fs"))
	var (
		mu    sync.Mutex
		shown []string
	)
	asked := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), shown...) }
	human := client.WithElicitationHandler(elicitFunc(func(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		mu.Lock()
		shown = append(shown, r.Params.Message)
		mu.Unlock()
		scoper.glob.Store("/**") // widened after the question went out
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
			Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{channel.Field: policy.OptionAllowSessionScoped}}}, nil
	}))
	c := connectAs(t, f, mcp.LATEST_PROTOCOL_VERSION, human)
	out, isErr := call(t, c, "write_file", map[string]any{"path": "/docs/a.md", "content": "x"})
	if q := asked(); len(q) != 1 || !strings.Contains(q[0], "/docs/**") {
		t.Fatalf("the human was shown %q, want one question naming /docs/**", q)
	}
	if !isErr || !strings.Contains(out, "refused the approval") || len(f.ran()) != 0 {
		t.Fatalf("the retry under a wider scope: error %v %q, ran %v; want it refused and nothing run", isErr, out, f.ran())
	}
	// Nothing was remembered: a write outside what the human saw is asked.
	scoper.glob.Store("/docs/**")
	call(t, c, "write_file", map[string]any{"path": "/etc/passwd", "content": "x"})
	if n := len(asked()); n != 2 {
		t.Fatalf("a write to /etc/passwd was asked about %d times, want once (no scope remembered)", n-1)
	}
}
