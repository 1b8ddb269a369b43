package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store/pgtest"
)

// waitFor polls cond until it holds or d passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A notification lost while the listener reconnects (its backend ended
// with pg_terminate_backend, and the revoke committed in the gap) does
// not keep a revoked grant alive: the next Covers reads the revision, and
// the reconnect's wake-up brings the snapshot up to date by itself.
func TestARevokeWhoseNotificationWasLostIsSeenByTheNextCovers(t *testing.T) {
	t.Parallel()
	url := pgtest.Shared(t).URL
	a := openTest(t, url, Options{Replica: "a", Staleness: testStaleness})
	b := openTest(t, url, Options{Replica: "b", Poll: time.Hour, Staleness: testStaleness})
	ctx := context.Background()
	for round := 0; round < 5; round++ {
		g := mustAdd(t, a, session.SharedGrant{Key: toolKey(round), Scope: team})
		if !mustCover(t, b, dana, g.Key, "") {
			t.Fatalf("round %d: b does not see the grant", round)
		}
		// The pid read may be the previous round's connection, ended and
		// not yet replaced: try until a live listener is ended.
		var pid int32
		var ended bool
		waitFor(t, 10*time.Second, "b's listener was never connected and ended", func() bool {
			if pid = b.pg.listenerPID.Load(); pid == 0 {
				return false
			}
			if err := a.db.QueryRowContext(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ended); err != nil {
				t.Fatalf("round %d: pg_terminate_backend(%d): %v", round, pid, err)
			}
			return ended
		})
		if n, err := a.Revoke(ctx, GrantFilter{ID: g.ID}, "lena"); err != nil || n != 1 {
			t.Fatalf("round %d: Revoke = %d, %v", round, n, err)
		}
		if mustCover(t, b, dana, g.Key, "") {
			t.Fatalf("round %d: the revoke whose notification was lost is still covered by b's next Covers", round)
		}
	}
	// Without a Covers and with no poll due, the reconnect alone refreshes.
	g := mustAdd(t, a, session.SharedGrant{Key: toolKey(99), Scope: team})
	mustCover(t, b, dana, g.Key, "")
	pid := b.pg.listenerPID.Load()
	waitFor(t, 10*time.Second, "b's listener never connected", func() bool { pid = b.pg.listenerPID.Load(); return pid != 0 })
	if _, err := a.db.ExecContext(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Revoke(ctx, GrantFilter{ID: g.ID}, "lena"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "b's snapshot still holds the revoked grant after its listener reconnected", func() bool {
		return !b.grants.cur.Load().holds(g.Key, g.ID)
	})
}

// While Postgres is down no remembered approval applies: Covers says it
// cannot confirm it is current (without the password), promptly; when
// the server is back, the same process answers again, revokes made
// meanwhile included.
func TestCoversFailsClosedWhilePostgresIsDownAndRecoversWhenItReturns(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	url := c.URL(c.CreateDB(t))
	a := openTest(t, url, Options{Replica: "a", Staleness: testStaleness})
	b := openTest(t, url, Options{Replica: "b", Poll: 50 * time.Millisecond}) // the default Staleness
	ctx := context.Background()
	kept := mustAdd(t, a, session.SharedGrant{Key: toolKey(1), Scope: team})
	gone := mustAdd(t, a, session.SharedGrant{Key: toolKey(2), Scope: team})
	if !mustCover(t, b, dana, kept.Key, "") || !mustCover(t, b, dana, gone.Key, "") {
		t.Fatal("b does not see the grants")
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		began := time.Now()
		ok, err := b.Covers(ctx, dana, kept.Key, "")
		took := time.Since(began)
		if ok || !errors.Is(err, session.ErrNotCurrent) {
			t.Fatalf("Covers with Postgres down = %v, %v; want false and ErrNotCurrent", ok, err)
		}
		if strings.Contains(err.Error(), c.Password()) || !strings.Contains(err.Error(), "cannot confirm it is current") {
			t.Fatalf("the error shows the password or does not say why: %v", err)
		}
		// Not a timing bar: a guard that a down server is not waited on
		// for the driver's 10 s connect timeout.
		if took > 5*time.Second {
			t.Fatalf("Covers took %v to fail closed", took)
		}
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	// The server is back; a's pool reconnects on its own.
	var n int
	waitFor(t, 30*time.Second, "a could not revoke after the restart", func() bool {
		var err error
		n, err = a.Revoke(ctx, GrantFilter{ID: gone.ID}, "lena")
		return err == nil
	})
	if n != 1 {
		t.Fatalf("Revoke after the restart ended %d grants", n)
	}
	waitFor(t, 30*time.Second, "b never answered again after Postgres returned", func() bool {
		_, err := b.Covers(ctx, dana, kept.Key, "")
		return err == nil
	})
	if !mustCover(t, b, dana, kept.Key, "") {
		t.Fatal("the grant kept through the outage is not covered after it")
	}
	if mustCover(t, b, dana, gone.Key, "") {
		t.Fatal("the grant revoked once the server was back is still covered")
	}
}

// addGrantsDirect writes n live team grants (keys base..base+n-1) in one
// transaction that moves the revision once, as n AddGrant calls would
// leave them, without n round trips.
func addGrantsDirect(t testing.TB, s *Store, base, n int) {
	t.Helper()
	err := s.inTx(context.Background(), func(tx *sql.Tx) error {
		rev, err := s.bump(context.Background(), tx)
		if err != nil {
			return err
		}
		stmt, err := tx.Prepare(s.rebind("INSERT INTO tw_grants (" + grantColumns + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)"))
		if err != nil {
			return err
		}
		defer stmt.Close()
		for i := base; i < base+n; i++ {
			k := toolKey(i)
			if _, err := stmt.Exec(newID(), k.App, k.Server, k.Connector, k.Tool, k.Hash, session.ScopeTeam, "", "", "", "test", time.Now().UnixNano(), rev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("adding %d grants: %v", n, err)
	}
}

// Ten thousand grants: Covers answers every one from the snapshot, a
// Covers while nothing changed reads no grant row, and one revoke among
// them is learnt by reading one row, not ten thousand.
func TestTenThousandGrantsAreReadOnceAndThenOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	const many = 10_000
	twoReplicas(t, func(t *testing.T, a, b *Store) {
		ctx := context.Background()
		addGrantsDirect(t, a, 0, many)
		if !mustCover(t, b, dana, toolKey(many-1), "") {
			t.Fatal("the last of many grants is not covered")
		}
		if read := b.grants.rowsRead.Load(); read != many {
			t.Fatalf("the first load read %d rows, want %d", read, many)
		}
		for i := 0; i < many; i += 97 {
			if !mustCover(t, b, omar, toolKey(i), "") {
				t.Fatalf("grant %d of %d is not covered", i, many)
			}
		}
		if mustCover(t, b, omar, toolKey(many), "") {
			t.Fatal("a tool with no grant is covered")
		}
		if read := b.grants.rowsRead.Load(); read != many {
			t.Fatalf("Covers with nothing changed read %d more rows", read-many)
		}
		if n, err := a.Revoke(ctx, GrantFilter{Tool: toolKey(4242).Tool}, "lena"); err != nil || n != 1 {
			t.Fatalf("Revoke = %d, %v", n, err)
		}
		if mustCover(t, b, omar, toolKey(4242), "") {
			t.Fatal("the revoked grant among many is still covered")
		}
		if !mustCover(t, b, omar, toolKey(4243), "") {
			t.Fatal("its neighbour is no longer covered")
		}
		if read := b.grants.rowsRead.Load(); read != many+1 {
			t.Fatalf("learning of one revoke read %d rows, want 1", read-many)
		}
		if sn := b.grants.cur.Load(); sn.count != many-1 {
			t.Fatalf("the snapshot holds %d grants, want %d", sn.count, many-1)
		}
	})
}

// BenchmarkCovers is one Covers (the confirming read included) with 1 and
// with 10,000 live grants: the count must not show in the time.
func BenchmarkCovers(b *testing.B) {
	for _, e := range engines {
		for _, n := range []int{1, 10_000} {
			b.Run(fmt.Sprintf("%s/grants=%d", e.name, n), func(b *testing.B) {
				url := benchURL(b, e)
				s := openTest(b, url, Options{Staleness: testStaleness})
				addGrantsDirect(b, s, 0, n)
				mustCover(b, s, dana, toolKey(0), "")
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if !mustCover(b, s, dana, toolKey(i%n), "") {
						b.Fatal("not covered")
					}
				}
			})
		}
	}
}

// benchURL is a fresh store's URL for a benchmark on engine e.
func benchURL(b *testing.B, e engine) string {
	b.Helper()
	if e.name == EnginePostgres {
		return pgtest.Shared(b).URL
	}
	return "sqlite:" + b.TempDir() + "/store.db"
}
