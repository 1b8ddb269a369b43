package e2e

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The eras BenchmarkServeCall's clients speak: sessions with Mcp-Session-Id,
// and the stateless 2026-07-28, where every call stands alone.
var serveBenchEras = []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728}

// The numbers of concurrent sessions the issue asks for.
var serveBenchSessions = []int{1, 10, 100, 1000}

// BenchmarkServeCall measures a tools/call of the Go test server's echo
// over streamable HTTP three ways in one run: direct to the upstream,
// through a plain byte-level reverse proxy (net/http/httputil, the floor
// for any HTTP gateway) and through the real `toolwarden serve` (default
// configuration: the read-only echo is allowed). At each number of
// concurrent sessions, every session is its own mcp-go client calling in a
// closed loop; a round runs every case in turn (the first case rotating),
// so that a busy machine slows them alike and their ratios hold.
//
// It reports per case p50 and p99 latency, calls a second per core of the
// machine, and the CPU the case's own process spent per call (the upstream
// for direct, the proxy otherwise); the ratios serve/rproxy and
// rproxy/direct; and fails on any error, any call answered with another's
// result, answered twice or run twice upstream. Goals (issue #24), at 100
// sessions: serve/rproxy p50 <= 1.3 and p99 <= 1.5.
//
// With TOOLWARDEN_BENCH_SERVE_B set to another toolwarden binary (and
// TOOLWARDEN_BENCH_SERVE_B_ARGS to extra serve flags, such as --audit off),
// a fourth case "serveB" runs it beside the first, and serveB/serve says
// what the change buys.
//
//	go test ./internal/e2e -run '^$' -bench 'BenchmarkServeCall$' -benchtime 5x
func BenchmarkServeCall(b *testing.B) {
	cases := startServeBench(b)
	for _, era := range serveBenchEras {
		b.Run("era="+era, func(eb *testing.B) {
			for _, n := range serveBenchSessions {
				var loads []*benchLoad // opened once: a sub-benchmark runs more than once
				eb.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
					if loads == nil {
						loads = openBenchLoads(b, eb, cases, n, era)
					}
					runServeCallRounds(b, loads, n)
				})
			}
		})
	}
}

// openBenchLoads opens n sessions to every case; they stay open until owner
// ends (a sub-benchmark's own cleanups run after each of its runs).
func openBenchLoads(b, owner *testing.B, cases []benchCase, n int, era string) []*benchLoad {
	var loads []*benchLoad
	for _, c := range cases {
		hc := benchHTTPClient(n)
		ss := openBenchSessions(b, owner, c, n, era, func() *http.Client { return hc })
		loads = append(loads, &benchLoad{c: c, sessions: ss})
	}
	return loads
}

// runServeCallRounds warms every case up, runs b.N interleaved rounds, and
// reports.
func runServeCallRounds(b *testing.B, loads []*benchLoad, sessions int) {
	benchRounds(b, loads, max(8, 512/sessions)) // a round of at least ~500 calls
	reportServeCall(b, loads, sessions)
}

// benchRounds warms every load up (two uncounted calls a session), then
// times b.N rounds of k calls a session, the loads taking turns and each
// round starting with the next, so no load always runs on a warm machine.
func benchRounds(b *testing.B, loads []*benchLoad, k int) {
	for _, l := range loads {
		l.reset()
		l.round(b, 2, false)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range loads {
			loads[(i+j)%len(loads)].round(b, k, true)
		}
	}
	b.StopTimer()
}

func reportServeCall(b *testing.B, loads []*benchLoad, sessions int) {
	figs := map[string]benchFigures{}
	byName := map[string]*benchLoad{}
	errs, twice := 0, 0
	for _, l := range loads {
		f := l.figures(runtime.NumCPU())
		figs[l.c.name] = f
		byName[l.c.name] = l
		b.ReportMetric(benchMS(f.p50), l.c.name+"-p50-ms")
		b.ReportMetric(benchMS(f.p99), l.c.name+"-p99-ms")
		b.ReportMetric(f.perSecPerCPU, l.c.name+"-calls/s/core")
		b.ReportMetric(float64(f.cpuPerCall.Microseconds()), l.c.name+"-cpu-us/call")
		errs += l.errs
		twice += l.twice()
		if l.errs > 0 {
			b.Errorf("%s, %d sessions: %d of %d calls went wrong; the first: %s", l.c.name, sessions, l.errs, l.calls, l.firstErr)
		}
		if n := l.twice(); n > 0 {
			b.Errorf("%s, %d sessions: %d calls were answered more than once", l.c.name, sessions, n)
		}
	}
	b.ReportMetric(float64(errs), "errors")
	b.ReportMetric(float64(twice), "answered-twice")
	benchRatios(b, figs, byName, "rproxy", "direct")
	benchRatios(b, figs, byName, "serveB", "serve")
	r50, r99, ok := benchRatios(b, figs, byName, "serve", "rproxy")
	if sessions == 100 && ok && (r50 > 1.3 || r99 > 1.5) {
		b.Logf("GOAL MISSED at 100 sessions over %d rounds: serve/rproxy p50 %.3f (goal <= 1.3), p99 %.3f (goal <= 1.5)", b.N, r50, r99)
	}
	b.ReportMetric(0, "ns/op")
}

// benchRatios reports num's p50 and p99 over den's, when both cases ran.
func benchRatios(b *testing.B, figs map[string]benchFigures, loads map[string]*benchLoad, num, den string) (p50, p99 float64, ok bool) {
	n, ok1 := figs[num]
	d, ok2 := figs[den]
	if !ok1 || !ok2 || d.p50 == 0 || d.p99 == 0 {
		return 0, 0, false
	}
	p50, p99 = float64(n.p50)/float64(d.p50), float64(n.p99)/float64(d.p99)
	b.ReportMetric(p50, num+"/"+den+"-p50")
	b.ReportMetric(p99, num+"/"+den+"-p99")
	if m, ok := sameRoundMedian(loads[num], loads[den], 0); ok {
		b.ReportMetric(m, num+"/"+den+"-p50-rounds")
	}
	if m, ok := sameRoundMedian(loads[num], loads[den], 1); ok {
		b.ReportMetric(m, num+"/"+den+"-p99-rounds")
	}
	return p50, p99, true
}

// sameRoundMedian is the median over rounds of num's percentile (0: p50,
// 1: p99) over den's in the same round: a load that comes and goes between
// rounds moves it less than the pooled ratio.
func sameRoundMedian(num, den *benchLoad, which int) (float64, bool) {
	if num == nil || den == nil || len(num.rounds) != len(den.rounds) || len(num.rounds) == 0 {
		return 0, false
	}
	var r []float64
	for i := range num.rounds {
		if d := den.rounds[i][which]; d > 0 {
			r = append(r, float64(num.rounds[i][which])/float64(d))
		}
	}
	if len(r) == 0 {
		return 0, false
	}
	slices.Sort(r)
	return r[len(r)/2], true
}

func benchMS(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// BenchmarkServeIdleSessionMemory opens 1000 sessions (protocol
// 2025-11-25) to each case; each session lists the tools and calls echo
// once, then sits idle. It reports the growth of the case's process's
// resident memory (VmRSS) divided by the sessions: for direct that is what
// mcp-go's own streamable HTTP server keeps, for rproxy what a plain proxy
// keeps, for serve the gateway's whole cost. With conn=own every session has
// its own TCP connection, kept alive, as separate agents have; with
// conn=shared the sessions share a pool of 16 connections, which leaves the
// sessions' own state; with conn=own+get every session also holds the
// standalone GET stream open, as the TypeScript SDK's clients do. The growth
// includes garbage the process has not yet given back, so it is an upper
// bound. Goal (issue #24): serve under 64 KiB a session.
//
//	go test ./internal/e2e -run '^$' -bench 'BenchmarkServeIdleSessionMemory' -benchtime 1x
func BenchmarkServeIdleSessionMemory(b *testing.B) {
	const n = 1000
	for _, conn := range []string{"own", "shared", "own+get"} {
		b.Run("conn="+conn, func(b *testing.B) {
			hc := func() *http.Client { return benchHTTPClient(1) }
			var extra []transport.StreamableHTTPCOption
			switch conn {
			case "shared":
				shared := benchHTTPClient(16)
				shared.Transport.(*http.Transport).MaxConnsPerHost = 16
				hc = func() *http.Client { return shared }
			case "own+get":
				//lint:ignore SA1019 2025-era clients (the TypeScript SDK's among them) hold this stream open
				extra = append(extra, transport.WithContinuousListening())
			}
			kib := map[string][]float64{}
			fds := map[string]float64{}
			var names []string
			for i := 0; i < b.N; i++ {
				cases := startServeBench(b) // fresh processes every time
				names = names[:0]
				for _, c := range cases {
					names = append(names, c.name)
					k, f := idleSessionKiB(b, c, n, hc, extra...)
					kib[c.name] = append(kib[c.name], k)
					fds[c.name] = f
				}
			}
			for _, name := range names {
				b.ReportMetric(fds[name], name+"-fds/session")
			}
			reportIdleSessionKiB(b, names, kib)
		})
	}
}

func reportIdleSessionKiB(b *testing.B, names []string, kib map[string][]float64) {
	for _, name := range names {
		v := slices.Clone(kib[name])
		slices.Sort(v)
		b.ReportMetric(v[len(v)/2], name+"-KiB/session")
		if name == "serve" && v[len(v)/2] >= 64 {
			b.Logf("GOAL MISSED: serve keeps %.1f KiB per idle session (goal < 64)", v[len(v)/2])
		}
	}
	b.ReportMetric(0, "ns/op")
}

// idleSessionKiB is how much c's process grew, per session, for n idle
// sessions that each listed the tools and made one call, each session's
// HTTP client from hc; and how many more files (connections) it holds open
// per session, which tells the connection and stream modes apart.
func idleSessionKiB(b *testing.B, c benchCase, n int, hc func() *http.Client, extra ...transport.StreamableHTTPCOption) (kib, fds float64) {
	b.Helper()
	warm := openBenchSessions(b, b, c, 1, mcp.ProtocolVersion20251125, hc, extra...)
	useBenchSessions(b, c, warm)
	time.Sleep(500 * time.Millisecond)
	before, fd0 := benchProcRSSKiB(b, c.pid), benchProcFiles(b, c.pid)
	ss := openBenchSessions(b, b, c, n, mcp.ProtocolVersion20251125, hc, extra...)
	useBenchSessions(b, c, ss)
	time.Sleep(time.Second) // let what the process does after answering settle
	after, fd1 := benchProcRSSKiB(b, c.pid), benchProcFiles(b, c.pid)
	for _, s := range ss {
		_ = s.Close()
	}
	return float64(after-before) / float64(n), float64(fd1-fd0) / float64(n)
}

// useBenchSessions has each session list the tools and call echo once,
// a few sessions at a time.
func useBenchSessions(b *testing.B, c benchCase, ss []*client.Client) {
	b.Helper()
	l := &benchLoad{c: c, sessions: ss}
	l.reset()
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for i, s := range ss {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := s.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
				l.fail(fmt.Sprintf("tools/list: %v", err))
				return
			}
			l.call(i, s)
		}()
	}
	wg.Wait()
	if l.errs > 0 {
		b.Fatalf("%s: %d of %d sessions failed; the first: %s", c.name, l.errs, len(ss), l.firstErr)
	}
}
