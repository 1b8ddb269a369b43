// Package interleave measures benchmark cases block by block in turn, so
// that a busy machine slows them alike and their ratios within one run
// hold: how toolwarden's benchmarks quote a cost against its baseline.
//
//	total := interleave.Blocks(b, []string{"session", "always"}, cases)
//	b.ReportMetric(float64(total[1])/float64(total[0]), "always/session")
package interleave

import (
	"testing"
	"time"
)

// block is how many calls of one case run between two clock readings:
// enough that reading the clock does not dominate a fast case.
const block = 16

// Blocks runs every case b.N times in blocks of calls, all cases in turn,
// and fails b when a case returns false (its answer changed). It reports
// each case's "<name>-ns/call" and zeroes ns/op (which would mix the
// cases), and returns each case's total time for the caller's ratios.
func Blocks(b *testing.B, names []string, cases []func() bool) []time.Duration {
	b.Helper()
	total := make([]time.Duration, len(cases))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, f := range cases {
			start := time.Now()
			for k := 0; k < block; k++ {
				if !f() {
					b.Fatalf("%s: the case's answer changed", names[j])
				}
			}
			total[j] += time.Since(start)
		}
	}
	for j, name := range names {
		b.ReportMetric(float64(total[j].Nanoseconds())/float64(b.N*block), name+"-ns/call")
	}
	b.ReportMetric(0, "ns/op")
	return total
}
