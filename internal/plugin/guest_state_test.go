package plugin

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

var (
	budgetOnce sync.Once
	budgetBin  []byte
)

// loadBudget loads testdata/gobudget (a Go guest built with the Go PDK's
// state accessors) as policy name with a budget of 2.
func loadBudget(t *testing.T, rt *Runtime, name string) *Plugin {
	t.Helper()
	budgetOnce.Do(func() { budgetBin = buildGuest(t, "./testdata/gobudget") })
	pol := &config.Policy{Name: name, Config: map[string]any{"budget": 2}}
	p, err := FromBytes(context.Background(), rt, pol, budgetBin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if !p.Stateful() {
		t.Fatal(`the budget guest says "state": true in describe, but the host did not read it`)
	}
	return p
}

func stateCheck(s *session.Session, tool string) *policy.CheckInput {
	ci := checkInput(`{}`)
	ci.Session = s.ID()
	ci.Tool = &hints.Tool{Name: tool, HashHex: testTool.HashHex}
	ci.State = s
	return ci
}

// The race: 5 calls sent at once with a budget of 2. Counting in
// observe let all 5 run; counting at check time under the session's slot
// lets exactly 2 through, every time.
func TestABudgetOfTwoLetsExactlyTwoOfFiveConcurrentChecksThrough(t *testing.T) {
	rt := newRuntime(t, Options{})
	p := loadBudget(t, rt, "budget")
	store := session.NewStore(nil)
	for iter := 0; iter < 30; iter++ {
		s := store.Get("s" + string(rune('a'+iter%26)) + strings.Repeat("x", iter/26))
		var allowed, asked atomic.Int32
		var wg sync.WaitGroup
		for range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v := p.Check(context.Background(), stateCheck(s, "fetch"))
				switch {
				case v.Err != nil:
					t.Errorf("check failed: %v", v.Err)
				case v.Verdict == policy.Allow:
					allowed.Add(1)
				case v.Verdict == policy.Ask:
					asked.Add(1)
				}
			}()
		}
		wg.Wait()
		if allowed.Load() != 2 || asked.Load() != 3 {
			t.Fatalf("iteration %d: %d allowed, %d asked; want 2 and 3", iter, allowed.Load(), asked.Load())
		}
		if n := s.Plugin("budget").State().Counters["calls"]; n != 2 {
			t.Fatalf("iteration %d: counter is %d, want 2", iter, n)
		}
	}
}

func TestStateIsPerSessionAndPerPlugin(t *testing.T) {
	rt := newRuntime(t, Options{})
	a, b := loadBudget(t, rt, "budget_a"), loadBudget(t, rt, "budget_b")
	store := session.NewStore(nil)
	s1, s2 := store.Get("one"), store.Get("two")
	for _, tc := range []struct {
		name string
		p    *Plugin
		s    *session.Session
		want policy.Verdict
	}{
		{"the first call of plugin a in session one is within budget", a, s1, policy.Allow},
		{"the second too", a, s1, policy.Allow},
		{"the third is over it", a, s1, policy.Ask},
		{"plugin b counts apart in the same session", b, s1, policy.Allow},
		{"session two counts apart for plugin a", a, s2, policy.Allow},
		{"and again", a, s2, policy.Allow},
		{"and then asks", a, s2, policy.Ask},
	} {
		if v := tc.p.Check(context.Background(), stateCheck(tc.s, "fetch")); v.Verdict != tc.want || v.Err != nil {
			t.Errorf("%s: got %s (%v), want %s", tc.name, v.Verdict, v.Err, tc.want)
		}
	}
	if got := s1.PluginStates(); got["budget_a"].Counters["calls"] != 2 || got["budget_b"].Counters["calls"] != 1 {
		t.Errorf("session one states = %v", got)
	}
}

// The state lives in the session, not in the guest: an instance that is
// discarded (here at its deadline) takes nothing with it.
func TestStateSurvivesADiscardedInstance(t *testing.T) {
	rt := newRuntime(t, Options{})
	p := loadBudget(t, rt, "budget")
	s := session.NewStore(nil).Get("s")
	if v := p.Check(context.Background(), stateCheck(s, "fetch")); v.Verdict != policy.Allow {
		t.Fatalf("first call: %s %v", v.Verdict, v.Err)
	}
	v := p.Check(context.Background(), stateCheck(s, "spin"))
	var f *Fault
	if v.Err == nil || !asFault(v.Err, &f) || f.Kind != FaultTimeout {
		t.Fatalf("spin: want a timeout, got %s %v", v.Verdict, v.Err)
	}
	if v := p.Check(context.Background(), stateCheck(s, "fetch")); v.Verdict != policy.Allow {
		t.Fatalf("second call after the discard: %s %v", v.Verdict, v.Err)
	}
	if v := p.Check(context.Background(), stateCheck(s, "fetch")); v.Verdict != policy.Ask {
		t.Fatalf("third call: the fresh instance must see the count of 2, got %s %v", v.Verdict, v.Err)
	}
}

func TestAnUpdateOverTheBoundFailsTheEventAndChangesNothing(t *testing.T) {
	rt := newRuntime(t, Options{})
	p := loadBudget(t, rt, "budget")
	s := session.NewStore(nil).Get("s")
	p.Check(context.Background(), stateCheck(s, "fetch"))
	v := p.Check(context.Background(), stateCheck(s, "flood"))
	if v.Err == nil || v.Verdict != policy.Deny || !strings.Contains(v.Reason, "over the bound of 64") {
		t.Fatalf("flood: want the on_error deny naming the bound, got %s %q", v.Verdict, v.Reason)
	}
	st := s.Plugin("budget").State()
	if len(st.Entries) != 0 || st.Counters["calls"] != 1 {
		t.Fatalf("state after a refused update = %+v, want only calls=1", st)
	}
}

func TestObserveUpdatesStateAndReportsIt(t *testing.T) {
	rt := newRuntime(t, Options{})
	p := loadBudget(t, rt, "budget")
	s := session.NewStore(nil).Get("s")
	o := &policy.ObserveInput{Session: "s", Server: "fs", App: "fs", Tool: &hints.Tool{Name: "read_file"}, State: s}
	res := p.Observe(context.Background(), o)
	if res.Err != nil || res.State == nil || res.State.Entries["last_tool"] != "read_file" {
		t.Fatalf("observe: %+v", res)
	}
	if got, _ := s.Plugin("budget").State().Entries["last_tool"]; got != "read_file" {
		t.Fatalf("session entry = %q", got)
	}
}

// A v1 plugin that never asks for state sees no "state" key and nothing
// changes for it.
func TestAPluginWithoutStateGetsNoStateKey(t *testing.T) {
	rt := newRuntime(t, Options{})
	p := loadBudget(t, rt, "budget")
	in := p.pool.take()
	defer p.pool.give(in)
	s := session.NewStore(nil).Get("s")
	st := session.PluginState{Counters: map[string]int64{"calls": 3}, Entries: map[string]string{"k": "v\""}}
	in.state = &st
	got := string(in.appendCheck(nil, stateCheck(s, "fetch")))
	in.state = nil
	if !strings.Contains(got, `,"state":{"counters":{"calls":3},"entries":{"k":"v\""}}`) {
		t.Errorf("stateful envelope lacks the state: %s", got)
	}
	if got := string(in.appendCheck(nil, stateCheck(s, "fetch"))); strings.Contains(got, `"state"`) {
		t.Errorf("an envelope without state has a state key: %s", got)
	}
}

func asFault(err error, f **Fault) bool {
	ff, ok := err.(*Fault)
	if ok {
		*f = ff
	}
	return ok
}
