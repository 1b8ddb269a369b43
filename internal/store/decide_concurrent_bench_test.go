package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/store/pgtest"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// BenchmarkDecideConcurrent is what serve does for a plain allowed call,
// many sessions at once, with no store and with a Postgres store, in one
// run: 48 sessions each in a closed loop of Check then ObserveAfter on a
// read-only tool. The store is measured as it is and as it was before
// concurrent loads shared round trips ("unbatched": a query and a pool
// connection per load, 8 idle connections kept of 16). Rounds rotate
// between the hosts so a busy machine slows them alike. It reports
// calls/s of each, postgres/nostore and postgres/unbatched, and per call
// the pool's waits and the connections closed for a full idle pool
// (opened again by a later call): what a call queues on besides CPU. Run it with -blockprofile and
// -mutexprofile to see where calls wait.
//
//	go test ./internal/store -run '^$' -bench DecideConcurrent -benchtime 5x
func BenchmarkDecideConcurrent(b *testing.B) {
	const sessions, k = 48, 40 // sessions, calls per session per round
	ctx := context.Background()
	read := parse(b, benchRead)
	args := json.RawMessage(`{"path":"/repo/notes.txt"}`)
	open := func() *store.Store {
		st, err := store.Open(ctx, pgtest.Shared(b).URL, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		return st
	}
	st, old := open(), open()
	store.Unbatched(old)
	hosts := []*host.Host{
		testhost.New(b, benchToml, host.Defaults().WithoutTrace()),
		testhost.New(b, benchToml, host.Defaults().WithoutTrace().WithStore(st)),
		testhost.New(b, benchToml, host.Defaults().WithoutTrace().WithStore(old)),
	}
	stores := []*store.Store{nil, st, old}
	names := []string{"nostore", "postgres", "unbatched"}
	round := func(h *host.Host, tag string) (time.Duration, int) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		wrong := 0
		start := time.Now()
		for i := 0; i < sessions; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				c := host.Call{Session: fmt.Sprintf("%s-%d", tag, i), Server: "fs", Tool: read, Arguments: args}
				for j := 0; j < k; j++ {
					d := h.Check(ctx, c)
					if d.Decision != host.Allow {
						mu.Lock()
						wrong++
						mu.Unlock()
						continue
					}
					h.ObserveAfter(ctx, c, &d, host.Result{Text: "hello"})
				}
			}(i)
		}
		wg.Wait()
		return time.Since(start), wrong
	}
	for i, h := range hosts {
		round(h, names[i]) // sessions made, pins taken, the pool warm
	}
	var before, after [3]sql.DBStats
	var total [3]time.Duration
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for j := range hosts {
			x := (n + j) % len(hosts)
			if stores[x] != nil {
				before[x] = store.PoolStats(stores[x])
			}
			d, wrong := round(hosts[x], names[x])
			if wrong > 0 {
				b.Fatalf("%s: %d calls not allowed", names[x], wrong)
			}
			total[x] += d
			if stores[x] != nil {
				s := store.PoolStats(stores[x])
				after[x].WaitCount += s.WaitCount - before[x].WaitCount
				after[x].WaitDuration += s.WaitDuration - before[x].WaitDuration
				after[x].MaxIdleClosed += s.MaxIdleClosed - before[x].MaxIdleClosed
			}
		}
	}
	b.StopTimer()
	calls := float64(b.N * sessions * k)
	for i, name := range names {
		b.ReportMetric(calls/total[i].Seconds(), name+"-calls/s")
		if stores[i] != nil {
			b.ReportMetric(float64(after[i].WaitCount)/calls, name+"-pool-waits/call")
			b.ReportMetric(float64(after[i].WaitDuration.Microseconds())/calls, name+"-pool-wait-µs/call")
			b.ReportMetric(float64(after[i].MaxIdleClosed)/calls, name+"-reopened/call")
		}
	}
	b.ReportMetric(total[0].Seconds()/total[1].Seconds(), "postgres/nostore")
	b.ReportMetric(total[2].Seconds()/total[1].Seconds(), "postgres/unbatched")
	b.ReportMetric(0, "ns/op")
}
