package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// budgetPlugin is a Go-native stateful plugin: it lets max calls per
// session through and asks after that. A native plugin holds its slot
// itself, as the WASM host does for guests (internal/plugin/guest_state.go).
type budgetPlugin struct {
	name string
	max  int64
}

func (b *budgetPlugin) Name() string                  { return b.name }
func (b *budgetPlugin) Matches(app, tool string) bool { return true }
func (b *budgetPlugin) CanApprove() bool              { return false }

func (b *budgetPlugin) Check(ctx context.Context, in *policy.CheckInput) policy.PluginVerdict {
	slot := in.State.Plugin(b.name)
	if err := slot.Acquire(ctx); err != nil {
		return policy.PluginVerdict{Verdict: policy.Deny, Err: err}
	}
	defer slot.Release()
	if slot.State().Counters["calls"] >= b.max {
		return policy.PluginVerdict{Verdict: policy.Ask, Code: "budget_spent", Reason: "the session's budget is spent"}
	}
	u := session.StateUpdate{Add: map[string]int64{"calls": 1}}
	st, err := slot.Apply(u)
	if err != nil {
		return policy.PluginVerdict{Verdict: policy.Deny, Err: err}
	}
	return policy.PluginVerdict{Verdict: policy.Abstain, StateUpdate: &u, State: &st}
}

// A read-only tool is allowed by the baseline, so the budget's ask is
// what decides.
const budgetTool = `{"name":"search","annotations":{"readOnlyHint":true,"openWorldHint":false}}`

func newBudgetHost(t *testing.T, audit *bytes.Buffer) (*host.Host, *config.Config) {
	t.Helper()
	cfg, err := config.LoadBytes("budget.toml", []byte(""))
	if err != nil {
		t.Fatal(err)
	}
	s := host.Defaults().WithPlugin(&budgetPlugin{name: "budget", max: 2})
	if audit != nil {
		s = s.WithAuditLog(audit)
	}
	h, err := host.New(context.Background(), cfg, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, cfg
}

func TestABudgetOfTwoLetsTwoOfFiveConcurrentCallsThroughTheHost(t *testing.T) {
	h, _ := newBudgetHost(t, nil)
	tl := tool(t, budgetTool)
	for iter := 0; iter < 50; iter++ {
		id := "s" + strings.Repeat("x", iter)
		var mu sync.Mutex
		counts := map[policy.Verdict]int{}
		var wg sync.WaitGroup
		for range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := h.Check(context.Background(), host.Call{Session: id, Server: "web", Tool: tl})
				mu.Lock()
				counts[d.Decision]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if counts[host.Allow] != 2 || counts[host.Ask] != 3 {
			t.Fatalf("iteration %d: %v, want 2 allowed and 3 asked", iter, counts)
		}
	}
}

func TestPluginStateIsInTheTraceAndTheAuditLog(t *testing.T) {
	var audit bytes.Buffer
	h, _ := newBudgetHost(t, &audit)
	d := h.Check(context.Background(), host.Call{Session: "s", Server: "web", Tool: tool(t, budgetTool)})
	var step *policy.Step
	for i := range d.Trace {
		if d.Trace[i].Step == policy.StepPlugin && d.Trace[i].Source == "budget" {
			step = &d.Trace[i]
		}
	}
	if step == nil || step.State == nil || step.State.Counters["calls"] != 1 || step.StateUpdate.Add["calls"] != 1 {
		t.Fatalf("the trace's plugin step does not show the state: %+v", d.Trace)
	}
	if !strings.HasSuffix(step.Detail, " [state: calls=1]") {
		t.Fatalf("explain's text (the step's detail) does not show the state: %q", step.Detail)
	}
	line := audit.String()
	if !strings.Contains(line, `"state_update":{"add":{"calls":1}},"state":{"counters":{"calls":1}}`) {
		t.Fatalf("the audit record does not show the state: %s", line)
	}
}

func TestPluginStateOutlivesAReloadAndEndsWithTheSession(t *testing.T) {
	h, cfg := newBudgetHost(t, nil)
	tl := tool(t, budgetTool)
	call := host.Call{Session: "s", Server: "web", Tool: tl}
	ctx := context.Background()
	h.Check(ctx, call)
	if err := h.Reload(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if d := h.Check(ctx, call); d.Decision != host.Allow {
		t.Fatalf("second call after a reload: %s", d.Decision)
	}
	if d := h.Check(ctx, call); d.Decision != host.Ask {
		t.Fatalf("third call: the reload lost the count (%s)", d.Decision)
	}
	h.EndSession("s")
	if d := h.Check(ctx, call); d.Decision != host.Allow {
		t.Fatalf("a new session with the same id starts afresh, got %s", d.Decision)
	}
}

// Hook mode: one process per call, the session in a file between them.
func TestPluginStateRoundTripsThroughTheSessionFile(t *testing.T) {
	dir := t.TempDir()
	tl := tool(t, budgetTool)
	ctx := context.Background()
	var got []policy.Verdict
	for range 3 {
		h, _ := newBudgetHost(t, nil) // a fresh process each time
		s, lock, err := h.OpenSessionFile(dir, "s")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Check(ctx, host.Call{Session: s.ID(), Server: "web", Tool: tl}).Decision)
		if err := lock.Save(s); err != nil {
			t.Fatal(err)
		}
		lock.Close()
	}
	if got[0] != host.Allow || got[1] != host.Allow || got[2] != host.Ask {
		t.Fatalf("decisions across three processes = %v, want allow, allow, ask", got)
	}
	var st session.State
	s, lock, err := session.NewStore(nil).OpenFile(dir, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	st = s.Snapshot()
	b, _ := json.Marshal(st.Plugins)
	if string(b) != `{"budget":{"counters":{"calls":2}}}` {
		t.Fatalf("session file's plugin state = %s", b)
	}
}
