package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/internal/session"
)

// Two replicas save one session at once, each its own taint: the stored
// state keeps every label, and every save moved the revision by one.
func TestSaveSessionFromTwoReplicasAtOnceLosesNoLabel(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		a, b := openTest(t, url, Options{Replica: "a"}), openTest(t, url, Options{Replica: "b"})
		ctx := context.Background()
		const each = 8
		// The row's first revision comes from the clock; the saves below
		// move it by one each.
		_, first, err := a.SaveSession(ctx, session.State{Version: 1, ID: "s"})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 2*each)
		for i := range each {
			for _, r := range []*Store{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					st := session.State{Version: 1, ID: "s", Labels: []string{fmt.Sprintf("%s-%d", r.Replica(), i)}}
					if _, _, err := r.SaveSession(ctx, st); err != nil {
						errs <- err
					}
				}()
			}
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		st, rev, changed, err := b.LoadSession(ctx, "s", 0)
		if err != nil || !changed {
			t.Fatalf("LoadSession: changed=%v err=%v", changed, err)
		}
		if rev != first+2*each {
			t.Errorf("revision %d after %d saves from %d", rev, 2*each, first)
		}
		for i := range each {
			for _, r := range []string{"a", "b"} {
				if l := fmt.Sprintf("%s-%d", r, i); !slices.Contains(st.Labels, l) {
					t.Errorf("label %s lost: %v", l, st.Labels)
				}
			}
		}
	})
}

func TestLoadSessionReadsOnlyWhenTheRevisionMoved(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s := openTest(t, url, Options{})
		ctx := context.Background()
		if _, _, changed, err := s.LoadSession(ctx, "s", 0); err != nil || changed {
			t.Fatalf("a session never saved: changed=%v err=%v", changed, err)
		}
		key := session.ApprovalKey{App: "fs", Server: "fs", Tool: "write", Hash: "h"}
		merged, rev, err := s.SaveSession(ctx, session.State{Version: 1, ID: "s", Approvals: []session.ApprovalKey{key},
			Plugins: map[string]session.PluginState{"budget": {Counters: map[string]int64{"calls": 2}}}})
		if err != nil || rev <= 0 || len(merged.Approvals) != 1 {
			t.Fatalf("first save: rev %d merged %+v err %v", rev, merged, err)
		}
		if _, _, changed, err := s.LoadSession(ctx, "s", rev); err != nil || changed {
			t.Fatalf("load at the saved revision: changed=%v err=%v", changed, err)
		}
		st, got, changed, err := s.LoadSession(ctx, "s", 0)
		if err != nil || !changed || got != rev || st.Approvals[0] != key || st.Plugins["budget"].Counters["calls"] != 2 {
			t.Fatalf("load from 0: %+v rev %d changed=%v err=%v", st, got, changed, err)
		}
		// A plugin state another save leaves out stays; one it names wins.
		merged, _, err = s.SaveSession(ctx, session.State{Version: 1, ID: "s", Plugins: map[string]session.PluginState{"other": {Entries: map[string]string{"k": "v"}}}})
		if err != nil || merged.Plugins["budget"].Counters["calls"] != 2 || merged.Plugins["other"].Entries["k"] != "v" {
			t.Fatalf("second save: %+v err %v", merged.Plugins, err)
		}
	})
}

// A damaged row is never merged into nor overwritten: it holds the
// session's taint. Both directions fail and say what to do.
func TestADamagedSessionRowIsRefusedAndKept(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s := openTest(t, url, Options{})
		ctx := context.Background()
		if _, _, err := s.SaveSession(ctx, session.State{Version: 1, ID: "s", Labels: []string{"private_data_seen"}}); err != nil {
			t.Fatal(err)
		}
		const damaged = `{"version":1,"id":"s","labels":["private_data_seen"`
		if _, err := s.db.ExecContext(ctx, s.rebind("UPDATE tw_sessions SET state = ?, rev = rev + 1 WHERE id = ?"), damaged, "s"); err != nil {
			t.Fatal(err)
		}
		_, _, _, err := s.LoadSession(ctx, "s", 0)
		if err == nil || !strings.Contains(err.Error(), "delete its row from tw_sessions") {
			t.Fatalf("load of a damaged row: %v", err)
		}
		if _, _, err := s.SaveSession(ctx, session.State{Version: 1, ID: "s", Labels: []string{"x"}}); err == nil {
			t.Fatal("a save merged into a damaged row")
		}
		var data string
		if err := s.db.QueryRowContext(ctx, s.rebind("SELECT state FROM tw_sessions WHERE id = ?"), "s").Scan(&data); err != nil || data != damaged {
			t.Fatalf("the damaged row was changed: %q %v", data, err)
		}
	})
}
