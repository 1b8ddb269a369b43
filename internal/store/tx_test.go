package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRebindNumbersPlaceholdersOnPostgresOnly(t *testing.T) {
	q := "SELECT a FROM t WHERE b = ? AND c = '?' AND d IN (?, ?)"
	pg := &Store{engine: EnginePostgres}
	if got, want := pg.rebind(q), "SELECT a FROM t WHERE b = $1 AND c = '?' AND d IN ($2, $3)"; got != want {
		t.Errorf("postgres: %q; want %q", got, want)
	}
	lite := &Store{engine: EngineSQLite}
	if got := lite.rebind(q); got != q {
		t.Errorf("sqlite: %q; want it unchanged", got)
	}
}

// listening waits until a Postgres store's listener is connected (a
// connect wakes every topic, which would blur what a test watches for).
func listening(t *testing.T, s *Store) int32 {
	t.Helper()
	if s.Engine() != EnginePostgres {
		return 0
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if pid := s.pg.listenerPID.Load(); pid != 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the listener never connected")
	return 0
}

// fired reports whether c is closed now or within the given time.
func fired(c <-chan struct{}, within time.Duration) bool {
	select {
	case <-c:
		return true
	default:
	}
	select {
	case <-c:
		return true
	case <-time.After(within):
		return false
	}
}

func bumpOnce(t *testing.T, s *Store) int64 {
	t.Helper()
	var rev int64
	err := s.inTx(context.Background(), func(tx *sql.Tx) error {
		var err error
		rev, err = s.bump(context.Background(), tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

func TestBumpWakesThisProcessWhenItsTransactionCommitsAndNotWhenItRollsBack(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s := openTest(t, url, Options{})
		listening(t, s)
		ctx := context.Background()
		woken := s.wake(TopicRevision)
		errUndo := errors.New("undo")
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			if _, err := s.bump(ctx, tx); err != nil {
				return err
			}
			return errUndo
		})
		if !errors.Is(err, errUndo) {
			t.Fatalf("inTx = %v; want the function's own error", err)
		}
		if fired(woken, 300*time.Millisecond) {
			t.Fatal("a rolled-back bump woke its waiters")
		}
		if rev := bumpOnce(t, s); rev != 1 {
			t.Fatalf("revision after one committed bump = %d; want 1 (the rolled-back one counts for nothing)", rev)
		}
		if !fired(woken, 0) {
			t.Fatal("a committed bump did not wake this process's waiters before inTx returned")
		}
		if again := s.wake(TopicRevision); fired(again, 0) {
			t.Fatal("a wake-up fired twice: the channel after it should wait for the next")
		}
	})
}

func TestInTxRunsATransactionAgainWhenItLostARace(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		ctx := context.Background()
		s := openTest(t, url, Options{BusyTimeout: 50 * time.Millisecond})
		attempts := 0
		if s.Engine() == EngineSQLite {
			// Another connection holds the write lock three busy timeouts
			// long: the first attempts get SQLITE_BUSY, a later one wins.
			holder, err := sql.Open(sqliteDriver, sqliteDSN(strings.TrimPrefix(url, "sqlite:"), 0, false))
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			tx, err := holder.Begin()
			if err != nil {
				t.Fatal(err)
			}
			time.AfterFunc(150*time.Millisecond, func() { _ = tx.Rollback() })
		}
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			attempts++
			if attempts == 1 && s.Engine() == EnginePostgres {
				// What Postgres answers a transaction that lost a race.
				_, err := tx.ExecContext(ctx, "DO $$ BEGIN RAISE EXCEPTION 'lost a race' USING ERRCODE = 'serialization_failure'; END $$")
				return err
			}
			_, err := s.bump(ctx, tx)
			return err
		})
		if err != nil {
			t.Fatalf("inTx = %v; want it to win after losing", err)
		}
		if s.Engine() == EnginePostgres && attempts != 2 {
			t.Fatalf("the function ran %d times; want 2", attempts)
		}
		if rev := revision(t, s); rev != 1 {
			t.Fatalf("revision %d; want 1", rev)
		}
		attempts = 0
		errOther := errors.New("not a race")
		if err := s.inTx(ctx, func(*sql.Tx) error { attempts++; return errOther }); !errors.Is(err, errOther) || attempts != 1 {
			t.Fatalf("a plain failure: %v after %d attempts; want it returned after 1", err, attempts)
		}
	})
}
