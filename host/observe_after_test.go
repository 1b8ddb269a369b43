package host

import (
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// gatedObserver adds label "seen" once released.
type gatedObserver struct {
	started, release chan struct{}
}

func (gatedObserver) Name() string                  { return "gated" }
func (gatedObserver) Matches(app, tool string) bool { return true }
func (o gatedObserver) Observe(context.Context, *policy.ObserveInput) policy.ObserveResult {
	close(o.started)
	<-o.release
	return policy.ObserveResult{Labels: []string{"seen"}}
}

// labelChecker denies when the session carries label "seen".
type labelChecker struct{}

func (labelChecker) Name() string                  { return "labels" }
func (labelChecker) Matches(app, tool string) bool { return true }
func (labelChecker) CanApprove() bool              { return false }
func (labelChecker) Check(_ context.Context, in *policy.CheckInput) policy.PluginVerdict {
	if slices.Contains(in.Labels, "seen") {
		return policy.PluginVerdict{Verdict: policy.Deny, Code: "saw_label"}
	}
	return policy.PluginVerdict{Verdict: policy.Abstain}
}

// An observation run after the answer is still seen by the session's next
// call: Check waits for it, however the goroutines are scheduled.
func TestTheNextCallWaitsForAnObservationAfterTheAnswer(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.LoadBytes("t.toml", []byte("[mcp_servers.fs]\ncommand = \"fs\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	obs := gatedObserver{started: make(chan struct{}), release: make(chan struct{})}
	h, err := New(ctx, cfg, Defaults().WithPlugin(obs).WithPlugin(labelChecker{}))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	tl, err := ParseTool([]byte(`{"name":"read","annotations":{"readOnlyHint":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	args := []byte(`{"path":"/x"}`)
	call := Call{Session: "s", Server: "fs", Tool: tl, Arguments: json.RawMessage(args)}
	d := h.Check(ctx, call)
	if d.Decision == policy.Deny {
		t.Fatalf("first call: %+v", d.Reasons)
	}
	h.ObserveAfter(ctx, call, &d, Result{Text: "ok"})
	copy(args, `{"path":"/y"}`) // the caller may reuse its memory at once
	<-obs.started

	result := make(chan Decision, 1)
	go func() { result <- h.Check(ctx, call) }()
	gate := h.observing.gate("s")
	for gate.waiters.Load() == 0 {
		select {
		case d := <-result:
			t.Fatalf("the next call was decided while the observation ran: %s %+v", d.Decision, d.Reasons)
		default:
			runtime.Gosched()
		}
	}
	close(obs.release)
	if d := <-result; d.Decision != policy.Deny {
		t.Fatalf("the next call did not see the observed label: %s %+v", d.Decision, d.Reasons)
	}
	if labels := h.Session("s").Labels(); !slices.Contains(labels, "seen") {
		t.Fatalf("labels %v", labels)
	}
}

// Close waits for observations still running after the answer.
func TestCloseWaitsForObservationsAfterTheAnswer(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.LoadBytes("t.toml", []byte("[mcp_servers.fs]\ncommand = \"fs\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	obs := gatedObserver{started: make(chan struct{}), release: make(chan struct{})}
	h, err := New(ctx, cfg, Defaults().WithPlugin(obs))
	if err != nil {
		t.Fatal(err)
	}
	tl, _ := ParseTool([]byte(`{"name":"read"}`))
	call := Call{Session: "s", Server: "fs", Tool: tl}
	d := h.Check(ctx, call)
	h.ObserveAfter(ctx, call, &d, Result{})
	<-obs.started
	closed := make(chan error, 1)
	go func() { closed <- h.Close(ctx) }()
	for range 1000 {
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) while an observation ran", err)
		default:
			runtime.Gosched()
		}
	}
	close(obs.release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}

type panickingObserver struct{ done chan struct{} }

func (panickingObserver) Name() string                  { return "panics" }
func (panickingObserver) Matches(app, tool string) bool { return true }
func (o panickingObserver) Observe(context.Context, *policy.ObserveInput) policy.ObserveResult {
	close(o.done)
	panic("observer bug")
}

// A Go-native observer that panics after the answer does not take the
// process down, and the session's next call goes on.
func TestAPanickingObserverAfterTheAnswerIsContained(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.LoadBytes("t.toml", []byte("[mcp_servers.fs]\ncommand = \"fs\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	obs := panickingObserver{done: make(chan struct{})}
	h, err := New(ctx, cfg, Defaults().WithPlugin(obs))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	tl, _ := ParseTool([]byte(`{"name":"read"}`))
	call := Call{Session: "s", Server: "fs", Tool: tl}
	d := h.Check(ctx, call)
	h.ObserveAfter(ctx, call, &d, Result{})
	<-obs.done
	if d := h.Check(ctx, call); d.Decision == policy.Deny {
		t.Fatalf("the next call: %+v", d.Reasons)
	}
}
