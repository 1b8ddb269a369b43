package session

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestPluginStateUpdatesApplyWholeOrNotAtAll(t *testing.T) {
	full := StateUpdate{Set: map[string]string{}}
	for i := 0; i < MaxStateKeys; i++ {
		full.Set["k"+strconv.Itoa(i)] = "v"
	}
	for _, tc := range []struct {
		name   string
		before StateUpdate
		update StateUpdate
		err    string
	}{
		{"a counter starts at zero", StateUpdate{}, StateUpdate{Add: map[string]int64{"calls": 1}}, ""},
		{"an entry is set", StateUpdate{}, StateUpdate{Set: map[string]string{"host": "example.com"}}, ""},
		{"64 keys fit", StateUpdate{}, full, ""},
		{"a 65th key does not", full, StateUpdate{Add: map[string]int64{"one_more": 1}}, "65 keys, over the bound of 64"},
		{"a key over 256 bytes does not", StateUpdate{}, StateUpdate{Add: map[string]int64{strings.Repeat("k", 257): 1}}, "1-256 bytes"},
		{"an empty key does not", StateUpdate{}, StateUpdate{Set: map[string]string{"": "v"}}, "1-256 bytes"},
		{"a value over 1 KiB does not", StateUpdate{}, StateUpdate{Set: map[string]string{"k": strings.Repeat("v", 1025)}}, "at most 1024 bytes"},
		{"a counter does not overflow", StateUpdate{Add: map[string]int64{"n": math.MaxInt64}}, StateUpdate{Add: map[string]int64{"n": 1}}, "overflow"},
		{"an entry is not a counter", StateUpdate{Set: map[string]string{"k": "v"}}, StateUpdate{Add: map[string]int64{"k": 1}}, "is an entry"},
		{"deletes apply first, so a full state can swap keys", full, StateUpdate{Delete: []string{"k0"}, Add: map[string]int64{"calls": 1}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sl := newSession("s").Plugin("p")
			if _, err := sl.Apply(tc.before); err != nil {
				t.Fatal(err)
			}
			before := sl.State()
			after, err := sl.Apply(tc.update)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error = %v, want one saying %q", err, tc.err)
			}
			if len(after.Counters) != len(before.Counters) || len(after.Entries) != len(before.Entries) ||
				len(sl.State().Counters)+len(sl.State().Entries) != len(before.Counters)+len(before.Entries) {
				t.Fatalf("a refused update changed the state")
			}
		})
	}
}

func TestPluginStateIsSnapshottedAndRestored(t *testing.T) {
	s := newSession("s")
	s.Plugin("budget").Apply(StateUpdate{Add: map[string]int64{"calls": 2}, Set: map[string]string{"last": "fetch"}})
	s.Plugin("other") // empty: not saved
	st := s.Snapshot()
	if len(st.Plugins) != 1 || st.Plugins["budget"].Counters["calls"] != 2 {
		t.Fatalf("snapshot = %+v", st.Plugins)
	}
	r := newSession("s")
	r.Restore(st)
	if got := r.Plugin("budget").State(); got.Counters["calls"] != 2 || got.Entries["last"] != "fetch" {
		t.Fatalf("restored = %+v", got)
	}
	r.Restore(State{})
	if got := r.Plugin("budget").State(); !got.Empty() {
		t.Fatalf("restoring a state without plugins kept %+v", got)
	}
}

func TestAcquireGivesUpWhenTheContextEnds(t *testing.T) {
	sl := newSession("s").Plugin("p")
	if err := sl.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sl.Acquire(ctx); err == nil {
		t.Fatal("a second Acquire with a canceled context got the slot that is held")
	}
	sl.Release()
	if err := sl.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
}
