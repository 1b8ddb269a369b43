package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
)

func closeQueue(t *testing.T, q *AuditQueue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := q.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestAuditRecordsOfTwoReplicasAreAllInTheTableWithTheirReplica(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		const perReplica = 500
		var queues []*AuditQueue
		for _, name := range []string{"replica-a", "replica-b"} {
			queues = append(queues, openTest(t, url, Options{Replica: name}).AuditSink())
		}
		var wg sync.WaitGroup
		for i, q := range queues {
			for w := range 5 {
				wg.Go(func() {
					for n := range perReplica / 5 {
						q.ExportAuditContext(context.Background(), audit.Record{
							Time: time.Now(), Event: "check", Session: fmt.Sprintf("s%d-%d-%d", i, w, n),
							Decision: map[string]string{"decision": "allow"},
						})
					}
				})
			}
		}
		wg.Wait()
		for _, q := range queues {
			closeQueue(t, q)
			if q.Dropped() != 0 || q.Written() != perReplica {
				t.Fatalf("written %d, dropped %d; want %d written, none dropped", q.Written(), q.Dropped(), perReplica)
			}
		}
		s := openTest(t, url, Options{})
		rows, err := s.db.Query("SELECT replica, session, event, record FROM tw_audit")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		seen := map[string]int{}
		sessions := map[string]bool{}
		for rows.Next() {
			var replica, session, event, record string
			if err := rows.Scan(&replica, &session, &event, &record); err != nil {
				t.Fatal(err)
			}
			var r audit.Record
			if err := json.Unmarshal([]byte(record), &r); err != nil || r.Session != session || r.Event != event || event != "check" {
				t.Fatalf("row (%s, %s) holds %q: not the record written (%v)", session, event, record, err)
			}
			seen[replica]++
			sessions[session] = true
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if seen["replica-a"] != perReplica || seen["replica-b"] != perReplica || len(sessions) != 2*perReplica {
			t.Fatalf("rows per replica %v, %d distinct sessions; want %d each and %d", seen, len(sessions), perReplica, 2*perReplica)
		}
	})
}

// holdWriteLock keeps another connection's lock on tw_audit until release
// is called, so that the queue's INSERTs wait.
func holdWriteLock(t *testing.T, url string) (release func()) {
	t.Helper()
	ctx := context.Background()
	other := openTest(t, url, Options{})
	c, err := other.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lock := []string{"BEGIN IMMEDIATE"}
	if other.Engine() == EnginePostgres {
		lock = []string{"BEGIN", "LOCK TABLE tw_audit IN ACCESS EXCLUSIVE MODE"}
	}
	for _, q := range lock {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return func() {
		if _, err := c.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Error(err)
		}
		_ = c.Close()
	}
}

func TestAFullAuditQueueDropsRecordsRatherThanBlockingTheDecision(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s := openTest(t, url, Options{Replica: "slow"})
		q := s.AuditSink()
		release := holdWriteLock(t, url)
		total := auditQueueLen + auditBatchMax + 500
		start := time.Now()
		var slowest time.Duration
		for n := range total {
			t0 := time.Now()
			q.ExportAuditContext(context.Background(), audit.Record{Time: t0, Event: "check", Session: fmt.Sprint(n)})
			slowest = max(slowest, time.Since(t0))
		}
		elapsed := time.Since(start)
		release()
		closeQueue(t, q)
		t.Logf("%d records queued in %s (slowest %s) while the table was locked; %d written, %d dropped", total, elapsed, slowest, q.Written(), q.Dropped())
		if slowest > 250*time.Millisecond {
			t.Fatalf("one record took %s to queue: the sink waited for the database", slowest)
		}
		if q.Dropped() < int64(total-auditQueueLen-auditBatchMax) {
			t.Fatalf("dropped %d; with the database stalled at least %d of %d must be dropped", q.Dropped(), total-auditQueueLen-auditBatchMax, total)
		}
		if q.Written()+q.Dropped() != int64(total) {
			t.Fatalf("written %d + dropped %d != %d records: some are unaccounted for", q.Written(), q.Dropped(), total)
		}
		var n int64
		if err := s.db.QueryRow("SELECT count(*) FROM tw_audit").Scan(&n); err != nil || n != q.Written() {
			t.Fatalf("%d rows in tw_audit (%v), the queue says %d written", n, err, q.Written())
		}
	})
}
