package store

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// Every decision with a store first reads its session's row (LoadSession),
// a round trip to the database that nothing may skip: it is what lets a
// taint saved by another replica count at the next call. On Postgres,
// loads that arrive together share round trips: a load joins the batch
// that has not started yet, and a batch starts as soon as one of
// sessionLoadsInFlight slots is free, reading every row it holds in one
// indexed SELECT. Without this, each of many concurrent sessions held a
// pool connection across its own round trip and queued for the pool's
// few connections: under load, decisions waited on the pool, not on the
// database (docs/performance.md). A load never joins a batch that has
// already started, so what it reads was committed no earlier than the
// load began: batching saves round trips, never freshness.
//
// SQLite reads a local file: each load keeps its own query.

const (
	// sessionLoadsInFlight bounds the batches running at once: enough that
	// a few concurrent loads each start at once (no added wait when the
	// process is quiet), few enough to leave the pool to saves, grants and
	// the audit queue.
	sessionLoadsInFlight = 4
	// sessionLoadTimeout bounds a batch's query, which no one caller's
	// context bounds (each caller still returns when its own ends).
	sessionLoadTimeout = 15 * time.Second
)

// sessionLoads batches the concurrent LoadSession reads of a Store.
type sessionLoads struct {
	mu       sync.Mutex
	open     *loadBatch // the batch new loads join; not started
	inFlight int
	// alone makes every load its own query, as before batching: for
	// the benchmark that measures what batching buys (tests only).
	alone bool
}

// loadKey is one load: a session and the revision its caller last saw.
type loadKey struct {
	id    string
	since int64
}

// sessionRow is what a load reads of a row: the state only when the
// revision moved past since ("" otherwise).
type sessionRow struct {
	data    string
	rev     int64
	updated int64
}

type loadBatch struct {
	keys map[loadKey]struct{}
	done chan struct{}
	// rows and err are set before done is closed; a key with no row has
	// no session stored.
	rows map[loadKey]sessionRow
	err  error
}

// readSession reads id's row for LoadSession: sql.ErrNoRows when none is
// stored.
func (s *Store) readSession(ctx context.Context, id string, since int64) (sessionRow, error) {
	if s.engine != EnginePostgres || s.sessionLoads.alone {
		var r sessionRow
		err := s.db.QueryRowContext(ctx, s.rebind("SELECT CASE WHEN rev > ? THEN state ELSE '' END, rev, updated_at FROM tw_sessions WHERE id = ?"), since, id).Scan(&r.data, &r.rev, &r.updated)
		return r, err
	}
	k := loadKey{id, since}
	b, start := s.sessionLoads.join(k)
	if start {
		s.runLoads(ctx, b)
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return sessionRow{}, ctx.Err()
	}
	if b.err != nil {
		return sessionRow{}, b.err
	}
	r, ok := b.rows[k]
	if !ok {
		return sessionRow{}, sql.ErrNoRows
	}
	return r, nil
}

// join adds k to the open batch and returns it, and whether the caller
// is to start it (a slot is free; else a running batch starts it when it
// ends).
func (l *sessionLoads) join(k loadKey) (*loadBatch, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open == nil {
		l.open = &loadBatch{keys: map[loadKey]struct{}{}, done: make(chan struct{})}
	}
	b := l.open
	b.keys[k] = struct{}{}
	if l.inFlight >= sessionLoadsInFlight {
		return b, false
	}
	l.inFlight++
	l.open = nil
	return b, true
}

// runLoads runs b on the caller's goroutine, then, while loads are
// waiting for a slot, starts the next batch on a goroutine of its own.
func (s *Store) runLoads(ctx context.Context, b *loadBatch) {
	s.queryLoads(ctx, b)
	l := &s.sessionLoads
	l.mu.Lock()
	next := l.open
	if next == nil {
		l.inFlight--
	} else {
		l.open = nil
	}
	l.mu.Unlock()
	if next != nil {
		go s.runLoads(context.WithoutCancel(ctx), next)
	}
}

// queryLoads reads every row b asks for in one SELECT and closes b.done.
func (s *Store) queryLoads(ctx context.Context, b *loadBatch) {
	defer close(b.done)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sessionLoadTimeout)
	defer cancel()
	ids := make([]string, 0, len(b.keys))
	sinces := make([]int64, 0, len(b.keys))
	for k := range b.keys {
		ids, sinces = append(ids, k.id), append(sinces, k.since)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT t.id, q.since, CASE WHEN t.rev > q.since THEN t.state ELSE '' END, t.rev, t.updated_at
FROM unnest($1::text[], $2::bigint[]) AS q(id, since) JOIN tw_sessions t ON t.id = q.id`, ids, sinces)
	if err != nil {
		b.err = err
		return
	}
	defer rows.Close()
	b.rows = make(map[loadKey]sessionRow, len(b.keys))
	for rows.Next() {
		var k loadKey
		var r sessionRow
		if err := rows.Scan(&k.id, &k.since, &r.data, &r.rev, &r.updated); err != nil {
			b.err = err
			return
		}
		b.rows[k] = r
	}
	b.err = rows.Err()
}
