package host_test

import (
	"context"
	"crypto/sha256"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCheckScalingAgainstCPU is BenchmarkCheckWithPluginsScaling with
// the machine's own scaling beside it: in every round, the trifecta+argguard
// decision and a pure-CPU loop (sha256 of 600 bytes, nothing shared) each
// run a batch serially and a batch from GOMAXPROCS goroutines. It reports
// each one's scaling (serial ns/op over parallel ns/op, medians over the
// rounds) and the median of the per-round ratios "scaling/cpu-scaling": 1
// means a decision scales as well as code that shares nothing does on this
// machine at this moment, which a busy machine lowers for both alike.
func BenchmarkCheckScalingAgainstCPU(b *testing.B) {
	h, calls := scalingHost(b)
	ctx := context.Background()
	procs := len(calls)
	var data [600]byte
	var sink atomic.Int64
	work := []func(g int){
		func(g int) { h.Check(ctx, calls[g]) },
		func(int) {
			sum := sha256.Sum256(data[:])
			if sum[0] == 0 {
				sink.Add(1)
			}
		},
	}
	// A batch of each takes about the same time.
	batches := []int{500, 2000}
	var scaling [2][]float64
	var ratios []float64
	b.ResetTimer()
	for done := 0; done < b.N; done += 2 * batches[0] {
		var round [2]float64
		for w, f := range work {
			batch := batches[w]
			t0 := time.Now()
			for range batch {
				f(0)
			}
			serial := time.Since(t0)
			var next atomic.Int64
			var wg sync.WaitGroup
			t0 = time.Now()
			for g := range procs {
				wg.Go(func() {
					for next.Add(1) <= int64(batch) {
						f(g)
					}
				})
			}
			wg.Wait()
			round[w] = float64(serial) / float64(time.Since(t0))
			scaling[w] = append(scaling[w], round[w])
		}
		ratios = append(ratios, round[0]/round[1])
	}
	b.StopTimer()
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(median(scaling[0]), "scaling")
	b.ReportMetric(median(scaling[1]), "cpu-scaling")
	b.ReportMetric(median(ratios), "scaling/cpu-scaling")
}
