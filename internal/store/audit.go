package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
)

// Audit records in tw_audit: every replica's decisions in one table, each
// row naming the replica that wrote it. A decision never waits for the
// database: records are queued and written in batches by one goroutine,
// and when the queue is full (the database is slow or down) a record is
// dropped, counted and logged. The JSON Lines file each replica writes
// stays the record of last resort.

// Audit queue bounds.
const (
	// auditQueueLen is how many records wait for the database at most.
	auditQueueLen = 4096
	// auditBatchMax is how many records one INSERT writes at most
	// (6 parameters each, well under both engines' limits).
	auditBatchMax = 200
	// auditAttempts is how often a batch is tried before it is dropped.
	auditAttempts = 3
	// auditWriteTimeout bounds one batch's INSERT.
	auditWriteTimeout = 10 * time.Second
	// auditDropLogEvery: after the first dropped record, one log line per
	// this many more, so that a database outage does not flood the log.
	auditDropLogEvery = 1000
)

// AuditQueue is the store's audit sink (audit.Sink): ExportAuditContext
// queues a record and returns at once. Close writes what is queued.
type AuditQueue struct {
	s       *Store
	q       chan auditRow
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	closed  atomic.Bool
	dropped atomic.Int64
	written atomic.Int64
}

type auditRow struct {
	id, replica, session, event, record string
	at                                  int64
}

// AuditSink starts a queue writing audit records to tw_audit. The caller
// closes it (before the Store) to write what is still queued.
func (s *Store) AuditSink() *AuditQueue {
	a := &AuditQueue{s: s, q: make(chan auditRow, auditQueueLen), stop: make(chan struct{}), done: make(chan struct{})}
	go a.run()
	return a
}

var _ audit.Sink = (*AuditQueue)(nil)

// ExportAuditContext queues e; it never blocks. A record that does not
// fit the queue is dropped and counted (Dropped).
func (a *AuditQueue) ExportAuditContext(_ context.Context, e audit.Event) {
	if e == nil {
		return
	}
	row := a.rowOf(e)
	if a.closed.Load() {
		a.drop(1, "the audit queue is closed")
		return
	}
	select {
	case a.q <- row:
	default:
		a.drop(1, "the audit queue is full (the store is slow or unreachable)")
	}
}

// rowOf encodes e now, on the caller's goroutine: the record may share
// data the caller changes after the call returns.
func (a *AuditQueue) rowOf(e audit.Event) auditRow {
	rec, ok := e.(audit.Record)
	if !ok {
		if p, isPtr := e.(*audit.Record); isPtr && p != nil {
			rec, ok = *p, true
		}
	}
	if !ok {
		rec = audit.Record{Time: a.s.now(), Event: e.Name(), Decision: e}
	}
	if rec.Time.IsZero() {
		rec.Time = a.s.now()
	}
	body, err := json.Marshal(rec)
	if err != nil {
		body, _ = json.Marshal(map[string]string{"event": rec.Event, "error": "audit record not encodable: " + err.Error()})
	}
	return auditRow{id: newID(), replica: a.s.opts.Replica, session: rec.Session, event: rec.Event, record: string(body), at: rec.Time.UnixNano()}
}

// Dropped is how many records were not written (queue full, or the
// database refused a batch auditAttempts times).
func (a *AuditQueue) Dropped() int64 { return a.dropped.Load() }

// Written is how many records are in tw_audit.
func (a *AuditQueue) Written() int64 { return a.written.Load() }

// Close stops taking records and writes the queued ones (until ctx ends).
func (a *AuditQueue) Close(ctx context.Context) error {
	a.once.Do(func() {
		a.closed.Store(true)
		close(a.stop)
	})
	select {
	case <-a.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("store %s: audit records still queued at close: %w", a.s.url, ctx.Err())
	}
}

func (a *AuditQueue) drop(n int64, why string) {
	total := a.dropped.Add(n)
	if total-n == 0 || total/auditDropLogEvery != (total-n)/auditDropLogEvery {
		a.s.log.Warn("audit records not written to the shared store (the audit log file still has them)", "store", a.s.url, "why", why, "dropped_total", total)
	}
}

// run writes batches until Close, then what is left.
func (a *AuditQueue) run() {
	defer close(a.done)
	batch := make([]auditRow, 0, auditBatchMax)
	for {
		select {
		case r := <-a.q:
			batch = a.fill(append(batch[:0], r))
			a.write(batch)
		case <-a.stop:
			for {
				batch = a.fill(batch[:0])
				if len(batch) == 0 {
					return
				}
				a.write(batch)
			}
		}
	}
}

// fill adds what is queued, without waiting, up to auditBatchMax.
func (a *AuditQueue) fill(batch []auditRow) []auditRow {
	for len(batch) < auditBatchMax {
		select {
		case r := <-a.q:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// write inserts batch in one statement, trying auditAttempts times.
func (a *AuditQueue) write(batch []auditRow) {
	q := "INSERT INTO tw_audit (id, at, replica, session, event, record) VALUES " +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?), ", len(batch)), ", ")
	args := make([]any, 0, 6*len(batch))
	for _, r := range batch {
		args = append(args, r.id, r.at, r.replica, r.session, r.event, r.record)
	}
	var err error
	for attempt := range auditAttempts {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt*attempt) * 100 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), auditWriteTimeout)
		_, err = a.s.db.ExecContext(ctx, a.s.rebind(q), args...)
		cancel()
		if err == nil {
			a.written.Add(int64(len(batch)))
			return
		}
	}
	a.drop(int64(len(batch)), "the store refused the records: "+err.Error())
}
