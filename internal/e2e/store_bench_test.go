package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/toolwarden/toolwarden/internal/store/pgtest"
)

// BenchmarkStoreReplicasCalls measures calls a second through three
// `toolwarden serve` replicas on one Postgres database against one of
// them alone, in one run: the same number of 2025-11-25 sessions, each
// calling an allowed echo in a closed loop, all on replica A ("one") or
// spread round-robin over A, B and C ("three"), and, as the baseline, all
// on a serve with no store ("nostore": approvals file, state in memory);
// rounds rotate between the cases so a busy machine slows them alike. It
// reports each case's calls/s, p50 and p99, three/one and one/nostore;
// any call lost, answered wrong or run twice upstream fails it. On a machine with fewer cores than
// replicas the ratio says what the store costs, not what replicas buy.
//
//	go test ./internal/e2e -run '^$' -bench 'BenchmarkStoreReplicasCalls$' -benchtime 5x
func BenchmarkStoreReplicasCalls(b *testing.B) {
	const sessions = 48
	f := newStoreFleet(b, pgtest.Shared(b).URL)
	f.startN(b, 3)
	alone := f.startAlone(b)
	auth := transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer alice-token"})
	open := func(name string, urls []string) *benchLoad {
		hcs := make([]*http.Client, len(urls))
		for i := range hcs {
			hcs[i] = benchHTTPClient(sessions)
		}
		ss := make([]*client.Client, sessions)
		for i := range ss {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			r := i % len(urls) // round-robin
			s, err := openBenchSession(ctx, urls[r], hcs[r], legacyEra, auth)
			cancel()
			if err != nil {
				b.Fatalf("%s: session %d: %v", name, i, err)
			}
			ss[i] = s
		}
		b.Cleanup(func() {
			for _, s := range ss {
				_ = s.Close()
			}
		})
		// The CPU charged is this process's: the work is spread over
		// several replicas and Postgres.
		return &benchLoad{c: benchCase{name: name, tool: "up__echo", pid: os.Getpid()}, sessions: ss}
	}
	loads := []*benchLoad{
		open("nostore", []string{alone.url}),
		open("one", []string{f.replicas[0].url}),
		open("three", []string{f.replicas[0].url, f.replicas[1].url, f.replicas[2].url}),
	}
	benchRounds(b, loads, 16) // 16 calls per session per round
	perSec := map[string]float64{}
	for _, l := range loads {
		fig := l.figures(1)
		perSec[l.c.name] = fig.perSecPerCPU
		b.ReportMetric(fig.perSecPerCPU, l.c.name+"-calls/s")
		b.ReportMetric(benchMS(fig.p50), l.c.name+"-p50-ms")
		b.ReportMetric(benchMS(fig.p99), l.c.name+"-p99-ms")
		if l.errs > 0 {
			b.Errorf("%s: %d of %d calls went wrong; the first: %s", l.c.name, l.errs, l.calls, l.firstErr)
		}
		if n := l.twice(); n > 0 {
			b.Errorf("%s: %d calls were answered more than once", l.c.name, n)
		}
	}
	if perSec["one"] > 0 && perSec["nostore"] > 0 {
		b.ReportMetric(perSec["three"]/perSec["one"], "three/one")
		b.ReportMetric(perSec["one"]/perSec["nostore"], "one/nostore")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkStoreRevocationPropagation measures, end to end, how long a
// revoke takes to reach another replica: alice is granted "always" on
// replica A (a 2026-07-28 ask answered "always"), replica B is polled
// until it serves her on that grant, then `toolwarden approvals revoke
// --store` ends it while a poller keeps calling B; the figure is the time
// from the revoke command's return (its commit) to the end of B's first
// refusal, and from the command's start. A call to B that started after
// the revoke returned and was still served fails the benchmark: that is
// the guarantee (seen before the next decision), the time is how soon.
//
//	go test ./internal/e2e -run '^$' -bench 'BenchmarkStoreRevocationPropagation$' -benchtime 100x
func BenchmarkStoreRevocationPropagation(b *testing.B) {
	f := newStoreFleet(b, pgtest.Shared(b).URL)
	a, bb := f.start(b), f.start(b)
	var fromCommit, fromStart, grantSeen []time.Duration
	next := sequence("rev")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, s, g := revocationRound(b, f, a, bb, i, next)
		fromCommit, fromStart, grantSeen = append(fromCommit, c), append(fromStart, s), append(grantSeen, g)
	}
	b.StopTimer()
	for name, d := range map[string][]time.Duration{"commit-to-refusal": fromCommit, "revoke-to-refusal": fromStart, "grant-to-use": grantSeen} {
		slices.Sort(d)
		b.ReportMetric(benchMS(benchPercentile(d, 0.50)), name+"-p50-ms")
		b.ReportMetric(benchMS(benchPercentile(d, 0.99)), name+"-p99-ms")
	}
	b.ReportMetric(0, "ns/op")
}

// A revoke raced against calls: while a client calls replica B in a loop,
// `toolwarden approvals revoke --store` ends alice's grant; no call that
// began after the command returned is served (each is asked again), on
// every round.
func TestARevokeRacedAgainstCallsOnAnotherReplicaServesNoCallBegunAfterIt(t *testing.T) {
	t.Parallel()
	f := newStoreFleet(t, pgtest.Shared(t).URL)
	a, b := f.start(t), f.start(t)
	next := sequence("race")
	for round := range 3 {
		revocationRound(t, f, a, b, round, next)
	}
}

// sequence returns a maker of distinct messages (not safe for concurrent
// use).
func sequence(prefix string) func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("%s-%d", prefix, n) }
}

// revocationRound grants alice "always" through a prompt on A, waits for
// B to serve her on it, then revokes it with the CLI while B is called in
// a loop. It fails tb when a call to B that began after the revoke
// returned was served, and returns the times from the revoke's commit and
// from its start to B's first refusal, and from the grant to its first
// use on B.
func revocationRound(tb testing.TB, f *storeFleet, a, b *opsServe, round int, next func() string) (fromCommit, fromStart, grantSeen time.Duration) {
	tb.Helper()
	msg := next()
	first := storeCall(tb, a, "alice-token", "", "gate__echo", map[string]any{"message": msg}, nil)
	if !asked(first) {
		tb.Fatalf("round %d: alice was not asked on A: %s", round, first.body)
	}
	granted := time.Now()
	if r := storeCall(tb, a, "alice-token", "", "gate__echo", map[string]any{"message": msg}, answered(first, "always")); !seenOnce(r, msg) {
		tb.Fatalf("round %d: the always answer on A: %s", round, r.body)
	}
	eventually(tb, 10*time.Second, "B to serve alice on the grant", func() bool {
		m := next()
		return seenOnce(storeCall(tb, b, "alice-token", "", "gate__echo", map[string]any{"message": m}, nil), m)
	})
	grantSeen = time.Since(granted)
	commit, refused, late := revokeWhilePolling(tb, f, b, next)
	if late != "" {
		tb.Fatalf("round %d: %s", round, late)
	}
	// B may refuse before the command has exited (its commit comes
	// first): that counts as no delay at all.
	return max(0, refused.Sub(commit.end)), refused.Sub(commit.start), grantSeen
}

// revokeSpan is when the revoke command started and returned.
type revokeSpan struct{ start, end time.Time }

// revokeWhilePolling runs `approvals revoke --store` while a goroutine
// calls replica s in a loop, and returns the command's span and when the
// first refused call ended (every call before the revoke is served); late says what went wrong when a call that
// began after the command returned was served.
func revokeWhilePolling(b testing.TB, f *storeFleet, s *opsServe, next func() string) (span revokeSpan, refused time.Time, late string) {
	type poll struct {
		start, end time.Time
		served     bool
	}
	var mu sync.Mutex
	var polls []poll
	var msgs []string
	for range 64 {
		msgs = append(msgs, next()) // made here: next is not safe for the poller
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			msg := msgs[i%len(msgs)] + fmt.Sprintf("-%d", i)
			t0 := time.Now()
			r := storeCall(b, s, "alice-token", "", "gate__echo", map[string]any{"message": msg}, nil)
			p := poll{t0, time.Now(), seenOnce(r, msg)}
			mu.Lock()
			polls = append(polls, p)
			mu.Unlock()
			if !p.served && !asked(r) {
				b.Errorf("a call to B was neither served nor asked: %s", r.body)
				return
			}
		}
	}()
	span.start = time.Now()
	out, code := twRun(b, nil, "approvals", "revoke", "--store", f.store, "--server", "gate", "--tool", "echo")
	span.end = time.Now()
	if code != 0 {
		close(stop)
		<-done
		b.Fatalf("approvals revoke --store: exit %d:\n%s", code, out)
	}
	eventually(b, 10*time.Second, "B to refuse after the revoke", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range polls {
			if !p.served {
				return true
			}
		}
		return false
	})
	close(stop)
	<-done
	for _, p := range polls {
		if p.served && p.start.After(span.end) {
			return span, refused, fmt.Sprintf("a call to B that began %s after the revoke returned was served", p.start.Sub(span.end))
		}
		if !p.served && refused.IsZero() {
			refused = p.end
		}
	}
	return span, refused, ""
}
