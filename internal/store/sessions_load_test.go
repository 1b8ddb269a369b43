package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/internal/session"
)

// PoolStats is the connection pool's counters, for the benchmarks in
// store_test: how often a query waited for a connection, and how many
// connections were closed because the idle pool was full.
func PoolStats(s *Store) sql.DBStats { return s.db.Stats() }

// Unbatched makes s load sessions as before batching (a query and a pool
// connection per load) with the pool's old idle limit, so that one
// benchmark run measures both.
func Unbatched(s *Store) {
	s.sessionLoads.alone = true
	s.db.SetMaxIdleConns(8)
}

// Many sessions loaded at once each get their own row, at the revision
// their caller asked about: a session whose row moved gets its state, one
// whose row did not gets nothing, one never saved gets nothing, and the
// same session asked about at two revisions in one moment gets both
// answers right.
func TestConcurrentLoadsEachGetTheirOwnSessionsRow(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s := openTest(t, url, Options{})
		ctx := context.Background()
		const n = 48
		revs := make([]int64, n)
		for i := range n {
			_, rev, err := s.SaveSession(ctx, session.State{Version: 1, ID: fmt.Sprintf("s%d", i), Labels: []string{fmt.Sprintf("label-%d", i)}})
			if err != nil {
				t.Fatal(err)
			}
			revs[i] = rev
		}
		for range 3 {
			var wg sync.WaitGroup
			start := make(chan struct{})
			check := func(id string, since int64, want string, wantChanged bool, wantRev int64) {
				defer wg.Done()
				<-start
				st, rev, changed, err := s.LoadSession(ctx, id, since)
				switch {
				case err != nil:
					t.Errorf("load %s since %d: %v", id, since, err)
				case changed != wantChanged || rev != wantRev:
					t.Errorf("load %s since %d: changed=%v rev=%d, want changed=%v rev=%d", id, since, changed, rev, wantChanged, wantRev)
				case wantChanged && !slices.Equal(st.Labels, []string{want}):
					t.Errorf("load %s: labels %v, want [%s]", id, st.Labels, want)
				}
			}
			for i := range n {
				id := fmt.Sprintf("s%d", i)
				wg.Add(3)
				go check(id, 0, fmt.Sprintf("label-%d", i), true, revs[i])
				go check(id, revs[i], "", false, revs[i])
				go check(fmt.Sprintf("never-%d", i), 7, "", false, 0) // no row: rev 0
			}
			close(start)
			wg.Wait()
		}
	})
}

// A taint saved by another replica is read by a load that begins after
// the save returned, even while other sessions' loads keep the store
// busy: sharing round trips never answers a load from a read that began
// before it.
func TestALoadAfterASaveSeesItWhileOtherLoadsRun(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		a, b := openTest(t, url, Options{Replica: "a"}), openTest(t, url, Options{Replica: "b"})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, rev, err := a.SaveSession(ctx, session.State{Version: 1, ID: "target"})
		if err != nil {
			t.Fatal(err)
		}
		var busy sync.WaitGroup
		for i := range 32 {
			busy.Add(1)
			go func() {
				defer busy.Done()
				for ctx.Err() == nil {
					_, _, _, _ = b.LoadSession(ctx, fmt.Sprintf("other-%d", i), 0)
				}
			}()
		}
		defer busy.Wait()
		defer cancel()
		for i := range 50 {
			label := fmt.Sprintf("taint-%d", i)
			if _, _, err := a.SaveSession(ctx, session.State{Version: 1, ID: "target", Labels: []string{label}}); err != nil {
				t.Fatal(err)
			}
			st, got, changed, err := b.LoadSession(ctx, "target", rev)
			if err != nil || !changed || !slices.Contains(st.Labels, label) {
				t.Fatalf("save %d: the next load missed it: changed=%v labels=%v err=%v", i, changed, st.Labels, err)
			}
			rev = got
		}
	})
}

// Loads of many sessions at once on Postgres do not queue for the pool's
// connections: they share round trips, so the pool never runs short. (A
// load per connection, as before, made 64 loads wait for 16.)
func TestConcurrentLoadsOnPostgresDoNotQueueForThePool(t *testing.T) {
	for _, e := range engines {
		if e.name != EnginePostgres {
			continue
		}
		s := openTest(t, e.url(t), Options{})
		ctx := context.Background()
		if _, _, err := s.SaveSession(ctx, session.State{Version: 1, ID: "s"}); err != nil {
			t.Fatal(err)
		}
		before := s.db.Stats().WaitCount
		for range 5 {
			var wg sync.WaitGroup
			start := make(chan struct{})
			for range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					if _, _, _, err := s.LoadSession(ctx, "s", 0); err != nil {
						t.Error(err)
					}
				}()
			}
			close(start)
			wg.Wait()
		}
		if waits := s.db.Stats().WaitCount - before; waits > 0 {
			t.Errorf("320 loads in rounds of 64 waited for a pool connection %d times", waits)
		}
	}
}
