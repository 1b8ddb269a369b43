package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// txAttempts bounds how often inTx runs a transaction that lost a race
// (SQLITE_BUSY, a Postgres serialization failure or deadlock).
const txAttempts = 5

// inTx runs fn in a write transaction and commits it, running it again
// (from the start, so fn must only touch the database) when it lost a
// race another writer won. On SQLite every transaction begins IMMEDIATE:
// it takes the write lock first, so two writers queue instead of
// deadlocking on a read lock each wants to upgrade.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	var err error
	for attempt := 0; attempt < txAttempts; attempt++ {
		if attempt > 0 {
			if werr := sleepCtx(ctx, retryDelay(attempt)); werr != nil {
				return err
			}
		}
		err = s.tryTx(ctx, fn)
		if err == nil || !s.retryable(err) {
			return err
		}
	}
	if s.engine == EngineSQLite && sqliteBusy(err) {
		return s.classify(err) // ErrLocked, saying who to stop
	}
	return fmt.Errorf("store %s: gave up after %d attempts: %w", s.url, txAttempts, err)
}

func (s *Store) tryTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		s.forget(tx)
		_ = tx.Rollback()
		return err
	}
	topics := s.forget(tx)
	if err := tx.Commit(); err != nil {
		return err
	}
	for _, t := range topics {
		s.wakes.fire(t)
	}
	return nil
}

// retryDelay backs off a little more each attempt, with jitter so that
// writers that collided do not collide again.
func retryDelay(attempt int) time.Duration {
	base := time.Duration(attempt*attempt) * 5 * time.Millisecond
	return base + rand.N(base+time.Millisecond)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Store) retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if s.engine == EngineSQLite {
		return sqliteBusy(err)
	}
	return pgRetryable(err)
}

// Topics a wake-up names.
const (
	// TopicRevision fires when tw_revision moved (a grant added or revoked).
	TopicRevision = "revision"
	// TopicAsks fires when an ask was posted, answered or withdrawn.
	TopicAsks = "asks"
)

// bump moves the store's revision on by one inside tx and returns the new
// revision; every replica's watcher wakes when tx commits.
func (s *Store) bump(ctx context.Context, tx *sql.Tx) (int64, error) {
	var rev int64
	err := tx.QueryRowContext(ctx, "UPDATE tw_revision SET rev = rev + 1 WHERE id = 1 RETURNING rev").Scan(&rev)
	if err != nil {
		return 0, fmt.Errorf("store %s: bump the revision: %w", s.url, err)
	}
	return rev, s.notify(ctx, tx, TopicRevision)
}

// notify wakes topic's waiters when tx (a transaction of inTx, which
// fires them) commits: this process's at once,
// other replicas' through Postgres NOTIFY (which Postgres, too, delivers
// only on commit). It is a hint: waiters also poll.
func (s *Store) notify(ctx context.Context, tx *sql.Tx, topic string) error {
	if s.engine == EnginePostgres {
		if _, err := tx.ExecContext(ctx, "SELECT pg_notify($1, $2)", notifyChannel, topic); err != nil {
			return fmt.Errorf("store %s: notify %s: %w", s.url, topic, err)
		}
	}
	s.pendingMu.Lock()
	s.pending[tx] = append(s.pending[tx], topic)
	s.pendingMu.Unlock()
	return nil
}

// forget drops tx's pending topics and returns them.
func (s *Store) forget(tx *sql.Tx) []string {
	s.pendingMu.Lock()
	defer s.pendingMu.Unlock()
	t := s.pending[tx]
	delete(s.pending, tx)
	return t
}
