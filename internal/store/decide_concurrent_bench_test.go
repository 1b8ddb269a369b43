package store_test

import (
	"context"
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
// read-only tool. Rounds alternate between the hosts so a busy machine
// slows both alike. It reports calls/s of each and postgres/nostore, and
// the pool's waits and connections closed for a full idle pool per call
// (what a call queues on besides CPU). Run it with -blockprofile and
// -mutexprofile to see where calls wait.
//
//	go test ./internal/store -run '^$' -bench DecideConcurrent -benchtime 5x
func BenchmarkDecideConcurrent(b *testing.B) {
	const sessions, k = 48, 40 // sessions, calls per session per round
	ctx := context.Background()
	read := parse(b, benchRead)
	args := json.RawMessage(`{"path":"/repo/notes.txt"}`)
	st, err := store.Open(ctx, pgtest.Shared(b).URL, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	hosts := []*host.Host{
		testhost.New(b, benchToml, host.Defaults().WithoutTrace()),
		testhost.New(b, benchToml, host.Defaults().WithoutTrace().WithStore(st)),
	}
	names := []string{"nostore", "postgres"}
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
	before := store.PoolStats(st)
	_, rev0, _, _ := st.LoadSession(ctx, "postgres-0", 0)
	var total [2]time.Duration
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for j := range hosts {
			x := (n + j) % len(hosts)
			d, wrong := round(hosts[x], names[x])
			if wrong > 0 {
				b.Fatalf("%s: %d calls not allowed", names[x], wrong)
			}
			total[x] += d
		}
	}
	b.StopTimer()
	after := store.PoolStats(st)
	_, rev1, _, _ := st.LoadSession(ctx, "postgres-0", 0)
	b.ReportMetric(float64(rev1-rev0)/float64(b.N*k), "saves/call")
	calls := float64(b.N * sessions * k)
	for i, name := range names {
		b.ReportMetric(calls/total[i].Seconds(), name+"-calls/s")
	}
	b.ReportMetric(total[0].Seconds()/total[1].Seconds(), "postgres/nostore")
	b.ReportMetric(float64(after.WaitCount-before.WaitCount)/calls, "pool-waits/call")
	b.ReportMetric(float64((after.WaitDuration-before.WaitDuration).Microseconds())/calls, "pool-wait-µs/call")
	b.ReportMetric(float64(after.MaxIdleClosed-before.MaxIdleClosed)/calls, "idle-closed/call")
	b.ReportMetric(0, "ns/op")
}
