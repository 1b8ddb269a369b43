package host_test

import (
	"context"
	"crypto/sha256"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
)

// Scaling is throughput on every core over throughput on one core: a
// decision's batch runs in one goroutine with GOMAXPROCS 1, then split
// among GOMAXPROCS goroutines with every core, alternating in rounds
// within one run. Each round also times the batch in one goroutine with
// every core: that one gets the other core's help for free (the garbage
// collector marks and sweeps there while the goroutine decides), so
// "one-goroutine/parallel" is lower than the scaling, by what collection
// costs.
//
// A batch is long (about ten milliseconds on one core): changing
// GOMAXPROCS flushes every P's allocation cache and sync.Pool, so the
// first calls after it run cold, and a short batch measures that instead
// of the decision.
//
// Goroutines take a parallel batch's work in chunks of scalingChunk calls
// from a shared counter: one counter bumped at every call would be a write
// that every call makes on both cores, the very thing a scaling figure
// must not include (it cost a sha256 loop a tenth of its scaling here),
// and halves fixed up front leave one core idle whenever the other is
// slowed (by the machine's other tenants, or the collector).

// scalingChunk is how many calls a goroutine takes at once.
const scalingChunk = 32

// scalingRound times one batch of work each way: on one core, in one
// goroutine on every core, and split among procs goroutines on every
// core. work(g) is goroutine g's call.
func scalingRound(procs, batch int, work func(g int)) (oneCore, oneGoroutine, parallel time.Duration) {
	prev := runtime.GOMAXPROCS(1)
	t0 := time.Now()
	for range batch {
		work(0)
	}
	oneCore = time.Since(t0)
	runtime.GOMAXPROCS(prev)
	t0 = time.Now()
	for range batch {
		work(0)
	}
	oneGoroutine = time.Since(t0)
	var wg sync.WaitGroup
	var next atomic.Int64
	t0 = time.Now()
	for g := range procs {
		wg.Go(func() {
			for {
				end := next.Add(scalingChunk)
				n := min(scalingChunk, int64(batch)-(end-scalingChunk))
				if n <= 0 {
					return
				}
				for range n {
					work(g)
				}
			}
		})
	}
	wg.Wait()
	parallel = time.Since(t0)
	return oneCore, oneGoroutine, parallel
}

// scalingWork is what the scaling benchmarks measure: a Check per call.
func scalingWork(h *host.Host, calls []host.Call) []struct {
	name string
	work func(g int)
} {
	ctx := context.Background()
	return []struct {
		name string
		work func(g int)
	}{
		{"Check", func(g int) { h.Check(ctx, calls[g]) }},
	}
}

// BenchmarkCheckWithPluginsScaling is the trifecta+argguard decision of
// BenchmarkCheckWithPlugins on one core and on every core (each goroutine
// its own session, as a host serving several clients), alternating in
// batches within one run. It reports
// the scaling (2 on two idle cores) and one-goroutine/parallel. A shared
// machine lowers both; take several runs, and see
// BenchmarkCheckScalingAgainstCPU for what the machine allows at the
// moment.
func BenchmarkCheckWithPluginsScaling(b *testing.B) {
	h, calls := scalingHost(b)
	for _, w := range scalingWork(h, calls) {
		b.Run(w.name, func(b *testing.B) {
			const batch = 4000
			var one, oneG, par time.Duration
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += 3 * batch {
				o, g, p := scalingRound(len(calls), batch, w.work)
				one, oneG, par = one+o, oneG+g, par+p
				n += batch
			}
			b.StopTimer()
			perOp := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) }
			b.ReportMetric(perOp(one), "one-core-ns/op")
			b.ReportMetric(perOp(par), "parallel-ns/op")
			b.ReportMetric(perOp(one)/perOp(par), "scaling")
			b.ReportMetric(perOp(oneG)/perOp(par), "one-goroutine/parallel")
		})
	}
}

// BenchmarkCheckScalingAgainstCPU is BenchmarkCheckWithPluginsScaling with
// the machine's own scaling beside it: every round runs the decision's
// batches and then those of a pure-CPU loop (sha256 of 600 bytes, nothing
// shared). It reports each one's scaling (medians over the rounds) and
// the median of the per-round ratios "scaling/cpu-scaling": 1 means a
// decision scales as well as code that shares nothing does on this
// machine at this moment, which a busy machine lowers for both alike.
func BenchmarkCheckScalingAgainstCPU(b *testing.B) {
	h, calls := scalingHost(b)
	var data [600]byte
	var sink atomic.Int64
	cpu := func(int) {
		sum := sha256.Sum256(data[:])
		if sum[0] == 0 {
			sink.Add(1)
		}
	}
	for _, w := range scalingWork(h, calls) {
		b.Run(w.name, func(b *testing.B) {
			work := []func(g int){w.work, cpu}
			// A batch of each takes about the same time.
			batches := []int{4000, 16000}
			var scaling [2][]float64
			var ratios []float64
			b.ResetTimer()
			for done := 0; done < b.N; done += 3 * batches[0] {
				var round [2]float64
				for w, f := range work {
					one, _, par := scalingRound(len(calls), batches[w], f)
					round[w] = float64(one) / float64(par)
					scaling[w] = append(scaling[w], round[w])
				}
				ratios = append(ratios, round[0]/round[1])
			}
			b.StopTimer()
			median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
			b.ReportMetric(median(scaling[0]), "scaling")
			b.ReportMetric(median(scaling[1]), "cpu-scaling")
			b.ReportMetric(median(ratios), "scaling/cpu-scaling")
		})
	}
}
