package store

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/session"
)

// testClock is a settable clock for Options.Now.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *testClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// sessionRows is the ids of the rows in tw_sessions, read behind the
// store's back.
func sessionRows(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(), "SELECT id FROM tw_sessions ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func mustSave(t *testing.T, s *Store, id string, labels ...string) int64 {
	t.Helper()
	_, rev, err := s.SaveSession(context.Background(), session.State{Version: 1, ID: id, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// A session row not used for the retention goes; one saved within it,
// and one only loaded (used, never changed) within it, stay.
func TestTheSweepDeletesOnlySessionsUnusedForTheRetention(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		clock := newTestClock()
		s := openTest(t, url, Options{Now: clock.now})
		ctx := context.Background()
		mustSave(t, s, "old", "private_data_seen")
		mustSave(t, s, "read-only", "untrusted_content_seen")
		clock.advance(SessionRetention - 24*time.Hour)
		mustSave(t, s, "recent")
		if _, _, _, err := s.LoadSession(ctx, "read-only", 0); err != nil {
			t.Fatal(err)
		}
		clock.advance(48 * time.Hour) // "old" is a day past the retention
		s.sweepSessions(ctx)
		if got := sessionRows(t, s); !slices.Equal(got, []string{"read-only", "recent"}) {
			t.Fatalf("rows after the sweep: %v, want read-only and recent", got)
		}
		if st, _, changed, err := s.LoadSession(ctx, "read-only", 0); err != nil || !changed || !slices.Contains(st.Labels, "untrusted_content_seen") {
			t.Fatalf("the session only loaded lost its state: %+v %v %v", st, changed, err)
		}
		if _, _, changed, err := s.LoadSession(ctx, "old", 0); err != nil || changed {
			t.Fatalf("the swept session still loads: %v %v", changed, err)
		}
	})
}

// Saves run the sweep themselves (one in sessionSweepOdds), with no
// timer: an old row goes while other sessions are saved.
func TestSavingSessionsSweepsTheOldOnes(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		clock := newTestClock()
		s := openTest(t, url, Options{Now: clock.now})
		mustSave(t, s, "old")
		clock.advance(SessionRetention + time.Minute)
		for i := range 1000 {
			mustSave(t, s, fmt.Sprintf("new-%04d", i))
			if !slices.Contains(sessionRows(t, s), "old") {
				return
			}
		}
		t.Fatal("1000 saves never swept the old session")
	})
}

// A session swept and then saved again (by a process that had it
// in memory, or a new one) is seen by a process that remembers a
// revision of the swept row: the new row's revision starts above it.
// Were it to start at 1, that process would skip a taint saved since.
func TestARowMadeAgainAfterASweepIsNewerThanTheSweptOne(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		clock := newTestClock()
		a := openTest(t, url, Options{Now: clock.now, Replica: "a"})
		b := openTest(t, url, Options{Now: clock.now, Replica: "b"})
		ctx := context.Background()
		var seen int64
		for range 5 {
			seen = mustSave(t, b, "s")
		}
		clock.advance(SessionRetention + time.Minute)
		a.sweepSessions(ctx)
		if rows := sessionRows(t, a); len(rows) != 0 {
			t.Fatalf("rows after the sweep: %v", rows)
		}
		mustSave(t, a, "s", "private_data_seen")
		st, rev, changed, err := b.LoadSession(ctx, "s", seen)
		if err != nil || !changed || rev <= seen || !slices.Contains(st.Labels, "private_data_seen") {
			t.Fatalf("B, which saw revision %d of the swept row, loads: %+v rev %d changed %v err %v", seen, st, rev, changed, err)
		}
	})
}
