package host_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// lastTool is a Go-native stateful observer: it records the last tool that
// ran in the session.
type lastTool struct{}

func (lastTool) Name() string                  { return "last" }
func (lastTool) Matches(app, tool string) bool { return true }

func (lastTool) Observe(ctx context.Context, in *policy.ObserveInput) policy.ObserveResult {
	slot := in.State.Plugin("last")
	if err := slot.Acquire(ctx); err != nil {
		return policy.ObserveResult{Err: err}
	}
	defer slot.Release()
	u := session.StateUpdate{Set: map[string]string{"tool": in.Tool.Name}}
	st, err := slot.Apply(u)
	if err != nil {
		return policy.ObserveResult{Err: err}
	}
	return policy.ObserveResult{StateUpdate: &u, State: &st}
}

func TestObserveRecordsPluginStateChangesInTheAuditLog(t *testing.T) {
	cfg, err := config.LoadBytes("last.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var audit bytes.Buffer
	ctx := context.Background()
	h, err := host.New(ctx, cfg, host.Defaults().WithPlugin(lastTool{}).WithAuditLog(&audit))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	c := host.Call{Session: "s", Server: "web", Tool: tool(t, budgetTool)}
	d := h.Check(ctx, c)
	h.Observe(ctx, c, &d, host.Result{Text: "ok"})
	want := `"state":[{"plugin":"last","update":{"set":{"tool":"search"}},"state":{"entries":{"tool":"search"}}}]`
	if !strings.Contains(audit.String(), want) {
		t.Fatalf("the observe record lacks %s:\n%s", want, audit.String())
	}
	if got := h.Session("s").Plugin("last").State().Entries["tool"]; got != "search" {
		t.Fatalf("session entry = %q", got)
	}
}
