package store

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/session"
)

// BenchmarkRevocationPropagation measures fan-out: from a revoke
// returning on replica A to another replica's snapshot no longer holding
// the grant, WITHOUT the confirming read that Covers makes (which makes
// the next decision see it at once, whatever this time is). One iteration
// is one grant added and revoked, watched by two replicas at once:
//
//   - notify: woken by Postgres NOTIFY (its poll is an hour), Postgres only;
//   - poll: the poll alone (wake-ups ignored), every Options.Poll (200 ms);
//
// next to one Covers on a third replica, confirming read included, right
// after the revoke (covers-after-revoke: the read and the refresh it
// needs) and once nothing changed (covers: the read alone). Reported as
// p50/p99 and as ratios to covers-p50, from the same run:
//
//	go test -run '^$' -bench RevocationPropagation -benchtime 200x ./internal/store
func BenchmarkRevocationPropagation(b *testing.B) {
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			url := benchURL(b, e)
			a := openTest(b, url, Options{Replica: "a", Staleness: testStaleness})
			watchers := map[string]*Store{
				"poll": openTest(b, url, Options{Replica: "poll", Poll: pollPeriod, Staleness: testStaleness}),
			}
			watchers["poll"].grants.pollOnly = true
			if e.name == EnginePostgres {
				watchers["notify"] = openTest(b, url, Options{Replica: "notify", Poll: time.Hour, Staleness: testStaleness})
			}
			c := openTest(b, url, Options{Replica: "covers", Poll: time.Hour, Staleness: testStaleness})
			times := map[string][]time.Duration{}
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				g := mustAdd(b, a, session.SharedGrant{Key: toolKey(i), Scope: team})
				for _, w := range append(mapValues(watchers), c) {
					if !mustCover(b, w, dana, g.Key, "") {
						b.Fatal("a watcher does not see the new grant")
					}
				}
				// A revoke lands at a random point of the poll's period, as
				// a person's does; in step with the loop it would always
				// land just after a tick and wait a whole period.
				time.Sleep(rand.N(pollPeriod))
				var wg sync.WaitGroup
				var mu sync.Mutex
				if n, err := a.Revoke(ctx, GrantFilter{ID: g.ID}, "bench"); err != nil || n != 1 {
					b.Fatalf("Revoke = %d, %v", n, err)
				}
				revoked := time.Now()
				for name, w := range watchers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						d := waitDropped(w, g.Key, g.ID).Sub(revoked)
						mu.Lock()
						times[name] = append(times[name], d)
						mu.Unlock()
					}()
				}
				began := time.Now()
				if mustCover(b, c, dana, g.Key, "") {
					b.Fatal("Covers after the revoke still covers the grant")
				}
				times["covers-after-revoke"] = append(times["covers-after-revoke"], time.Since(began))
				wg.Wait()
				began = time.Now()
				mustCover(b, c, dana, g.Key, "")
				times["covers"] = append(times["covers"], time.Since(began))
			}
			b.StopTimer()
			report(b, times)
		})
	}
}

// pollPeriod is Options.Poll's default, named for the benchmark.
const pollPeriod = 200 * time.Millisecond

// waitDropped returns when w's snapshot no longer holds grant id of k.
func waitDropped(w *Store, k session.ApprovalKey, id string) time.Time {
	for {
		sn := w.grants.cur.Load()
		if !sn.holds(k, id) {
			return time.Now()
		}
		<-sn.replaced
	}
}

func mapValues(m map[string]*Store) []*Store {
	var out []*Store
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// report prints each series' p50/p99 in milliseconds and each p50/p99 as
// a multiple of one confirmed Covers' p50.
func report(b *testing.B, times map[string][]time.Duration) {
	base := percentile(times["covers"], 50)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range times {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		p50, p99 := percentile(times[name], 50), percentile(times[name], 99)
		b.ReportMetric(ms(p50), name+"-p50-ms")
		b.ReportMetric(ms(p99), name+"-p99-ms")
		if name != "covers" && base > 0 {
			b.ReportMetric(float64(p50)/float64(base), name+"-p50/covers-p50")
			b.ReportMetric(float64(p99)/float64(base), name+"-p99/covers-p50")
		}
		b.Logf("%-20s n=%d p50 %8.3f ms  p99 %8.3f ms", name, len(times[name]), ms(p50), ms(p99))
	}
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(i, 0)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
