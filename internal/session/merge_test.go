package session

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomState is a small state drawn from few names, so that two drawn
// states overlap (the same label, pin, plugin, grant number) often.
func randomState(r *rand.Rand) State {
	pick := func(prefix string, n int) string { return fmt.Sprintf("%s%d", prefix, r.IntN(n)) }
	st := State{Version: 1, ID: "s"}
	for range r.IntN(5) {
		st.Labels = append(st.Labels, pick("label", 6))
	}
	st.Labels = unionLabels(st.Labels, nil)
	for range r.IntN(4) {
		st.Approvals = append(st.Approvals, ApprovalKey{App: "a", Server: "srv", Tool: pick("tool", 4), Hash: pick("h", 3)})
	}
	for range r.IntN(4) {
		st.Pins = append(st.Pins, PinState{Server: "srv", Tool: pick("tool", 4), Hash: pick("h", 3)})
	}
	st.Pins = mergePins(st.Pins, nil) // one pin per tool
	for g := range uint64(r.IntN(3)) {
		for range 1 + r.IntN(2) {
			st.Scoped = append(st.Scoped, ScopedApproval{Grant: g + 1, Key: ApprovalKey{Server: "srv", Tool: pick("tool", 2), Hash: "h0"},
				Plugin: "argguard", Code: "path", Arg: "/path", Glob: pick("/repo/", 3) + "/**"})
		}
	}
	for range r.IntN(3) {
		if st.Plugins == nil {
			st.Plugins = map[string]PluginState{}
		}
		ps := PluginState{}
		if r.IntN(4) > 0 {
			ps.Counters = map[string]int64{pick("k", 3): r.Int64N(10)}
		}
		st.Plugins[pick("plugin", 3)] = ps
	}
	st.Counters = Counters{Calls: r.Int64N(100), Asks: r.Int64N(10), Denies: r.Int64N(10)}
	return st
}

func set[T comparable](list []T) map[T]bool {
	m := map[T]bool{}
	for _, x := range list {
		m[x] = true
	}
	return m
}

func TestMergeStateKeepsEveryLabelOfBothWhateverTheOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 25))
	for i := range 2000 {
		a, b := randomState(r), randomState(r)
		ab, ba := set(MergeState(a, b).Labels), set(MergeState(b, a).Labels)
		want := set(slices.Concat(a.Labels, b.Labels))
		for l := range want {
			if !ab[l] || !ba[l] {
				t.Fatalf("case %d: label %q lost: stored %v mine %v -> %v / %v", i, l, a.Labels, b.Labels, ab, ba)
			}
		}
		if len(ab) != len(want) || len(ba) != len(want) {
			t.Fatalf("case %d: labels from nowhere: %v / %v, want %v", i, ab, ba, want)
		}
	}
}

func TestMergeStateLosesNothingOfStoredThatMineDidNotReplace(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 25))
	for i := range 2000 {
		stored, mine := randomState(r), randomState(r)
		out := MergeState(stored, mine)
		outApprovals := set(out.Approvals)
		for _, a := range slices.Concat(stored.Approvals, mine.Approvals) {
			if !outApprovals[a] {
				t.Fatalf("case %d: approval %+v lost", i, a)
			}
		}
		outPins := map[toolKey]string{}
		for _, p := range out.Pins {
			outPins[toolKey{p.Server, p.Tool}] = p.Hash
		}
		minePins := map[toolKey]string{}
		for _, p := range mine.Pins {
			minePins[toolKey{p.Server, p.Tool}] = p.Hash
		}
		for _, p := range stored.Pins {
			k := toolKey{p.Server, p.Tool}
			want, replaced := minePins[k]
			if !replaced {
				want = p.Hash
			}
			if outPins[k] != want {
				t.Fatalf("case %d: pin of %s is %q, want %q (stored %q, mine %q)", i, p.Tool, outPins[k], want, p.Hash, minePins[k])
			}
		}
		for name, ps := range stored.Plugins {
			want := ps
			if m, replaced := mine.Plugins[name]; replaced {
				want = m
			}
			if !samePluginState(out.Plugins[name], want) {
				t.Fatalf("case %d: plugin %s state %+v, want %+v", i, name, out.Plugins[name], want)
			}
		}
		outGrants, _ := groupScoped(out.Scoped)
		for _, list := range [][]ScopedApproval{stored.Scoped, mine.Scoped} {
			grants, _ := groupScoped(list)
			for _, g := range grants {
				if !containsGrant(outGrants, g) {
					t.Fatalf("case %d: scoped grant %+v lost or combined with another: %+v", i, g, out.Scoped)
				}
			}
		}
		c := out.Counters
		if c.Calls < stored.Counters.Calls || c.Calls < mine.Counters.Calls || c.Asks < stored.Counters.Asks || c.Denies < mine.Counters.Denies {
			t.Fatalf("case %d: counters %+v below stored %+v or mine %+v", i, c, stored.Counters, mine.Counters)
		}
	}
}

// Two processes each numbered their first scoped answer 1: merged, the
// two answers must stay two grants, or a call needing both scopes at once
// would be lifted by scopes no one approved together.
func TestMergeStateKeepsScopedAnswersOfTwoProcessesApart(t *testing.T) {
	key := ApprovalKey{Server: "fs", Tool: "write", Hash: "h"}
	docs := ScopedApproval{Grant: 1, Key: key, Plugin: "argguard", Code: "path", Arg: "/path", Glob: "/repo/docs/**"}
	tests := ScopedApproval{Grant: 1, Key: key, Plugin: "argguard", Code: "dest", Arg: "/dest", Glob: "/repo/tests/**"}
	out := MergeState(State{ID: "s", Scoped: []ScopedApproval{docs}}, State{ID: "s", Scoped: []ScopedApproval{tests}})
	if len(out.Scoped) != 2 || out.Scoped[0].Grant == out.Scoped[1].Grant {
		t.Fatalf("merged scoped approvals %+v: want two grants", out.Scoped)
	}
	again := MergeState(out, State{ID: "s", Scoped: []ScopedApproval{tests}})
	if len(again.Scoped) != 2 {
		t.Fatalf("saving the same answer twice doubled it: %+v", again.Scoped)
	}
}

func TestArgsDigestReadsArgumentsAsValues(t *testing.T) {
	d := func(s string) string {
		t.Helper()
		v, err := ArgsDigest([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return v
	}
	if a, b := d(`{"path":"/a","mode":1}`), d(` { "mode" : 1, "path" : "\/a" } `); a != b {
		t.Errorf("same arguments spelled apart digest apart: %s %s", a, b)
	}
	if a, b := d(`{"path":"/a"}`), d(`{"path":"/b"}`); a == b {
		t.Errorf("different arguments digest alike")
	}
	if a, b := d(``), d(`{}`); a != b {
		t.Errorf("absent arguments are not the empty object")
	}
	if len(d(`{}`)) != 64 {
		t.Errorf("digest %q is not SHA-256 hex", d(`{}`))
	}
	for _, bad := range []string{`{"path":`, `{"a":1,"a":2}`} {
		if _, err := ArgsDigest([]byte(bad)); err == nil {
			t.Errorf("%s: digested, want an error", bad)
		}
	}
}

// A budget counted up by another process must not fall back to this
// process's stale copy when the session syncs; what this process changed
// since it last synced stands.
func TestAbsorbTakesAnothersPluginStateUnlessChangedHere(t *testing.T) {
	s := newSession("s")
	base := State{ID: "s", Plugins: map[string]PluginState{
		"budget": {Counters: map[string]int64{"calls": 1}},
		"mine":   {Counters: map[string]int64{"n": 1}},
	}}
	s.Restore(base)
	if _, err := s.Plugin("mine").Apply(StateUpdate{Add: map[string]int64{"n": 1}}); err != nil {
		t.Fatal(err)
	}
	stored := State{ID: "s", Labels: []string{"untrusted_content_seen"}, Plugins: map[string]PluginState{
		"budget": {Counters: map[string]int64{"calls": 2}},
		"mine":   {Counters: map[string]int64{"n": 7}},
	}}
	before := s.Changes()
	s.Absorb(stored, base)
	if got := s.Plugin("budget").State().Counters["calls"]; got != 2 {
		t.Errorf("budget after absorb = %d, want the stored 2", got)
	}
	if got := s.Plugin("mine").State().Counters["n"]; got != 2 {
		t.Errorf("a state changed here = %d after absorb, want this process's 2", got)
	}
	if !s.HasLabel("untrusted_content_seen") {
		t.Errorf("stored taint not absorbed: %v", s.Labels())
	}
	if s.Changes() != before {
		t.Errorf("absorbing counted as a change of this process (%d -> %d)", before, s.Changes())
	}
	since := s.Since(stored)
	if _, ok := since.Plugins["budget"]; ok {
		t.Errorf("Since sends the unchanged budget as mine: %+v", since.Plugins)
	}
	if got := since.Plugins["mine"].Counters["n"]; got != 2 {
		t.Errorf("Since leaves out the state changed here: %+v", since.Plugins)
	}
}

func TestAbsorbKeepsAPinChangedHereAndTakesTheRest(t *testing.T) {
	s := newSession("s")
	base := State{ID: "s", Pins: []PinState{{Server: "fs", Tool: "read", Hash: "r1"}, {Server: "fs", Tool: "write", Hash: "w1"}}}
	s.Restore(base)
	s.Repin("fs", "write", "w2") // approved here after a drift
	s.Absorb(State{ID: "s", Pins: []PinState{{Server: "fs", Tool: "read", Hash: "r2"}, {Server: "fs", Tool: "write", Hash: "w3"}, {Server: "fs", Tool: "list", Hash: "l1"}}}, base)
	for tool, want := range map[string]string{"read": "r2", "write": "w2", "list": "l1"} {
		if got, _ := s.Pinned("fs", tool); got != want {
			t.Errorf("pin of %s = %q, want %q", tool, got, want)
		}
	}
}

func TestSnapshotAndRestoreCarryScopedApprovals(t *testing.T) {
	s := newSession("s")
	key := ApprovalKey{Server: "fs", Tool: "write", Hash: "h"}
	s.RememberScoped(ScopedApproval{Key: key, Plugin: "argguard", Code: "path", Arg: "/path", Glob: "/repo/**"})
	st := s.Snapshot()
	if len(st.Scoped) != 1 || st.Scoped[0].Glob != "/repo/**" || st.Scoped[0].Grant == 0 {
		t.Fatalf("snapshot scoped = %+v", st.Scoped)
	}
	r := newSession("s")
	r.Restore(st)
	r.RememberScoped(ScopedApproval{Key: key, Plugin: "argguard", Code: "path", Arg: "/path", Glob: "/tmp/**"})
	got := r.ScopedApprovals()
	if len(got) != 2 || got[0].Grant == got[1].Grant {
		t.Fatalf("restored then remembered: %+v, want two grants", got)
	}
}

func TestChangesCountsStateButNotCounters(t *testing.T) {
	s := newSession("s")
	n := s.Changes()
	s.Count(true, false)
	if s.Changes() != n {
		t.Fatalf("a counter moved Changes")
	}
	s.Pin("fs", "read", "h")
	s.Pin("fs", "read", "h") // the same pin again changes nothing
	s.AddLabels("x")
	s.AddLabels("x")
	s.Remember(ApprovalKey{Tool: "read"})
	if got := s.Changes() - n; got != 3 {
		t.Fatalf("Changes moved by %d, want 3 (a pin, a label, an approval)", got)
	}
}
