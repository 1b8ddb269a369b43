package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchArguments are call arguments as the host checks them on every
// decision: a typical small call, a large one, and one with many keys
// (the map path).
func benchArguments() []struct {
	name string
	raw  []byte
} {
	var many strings.Builder
	many.WriteString("{")
	for i := range 200 {
		fmt.Fprintf(&many, `"key%d":%d,`, i, i)
	}
	many.WriteString(`"last":0}`)
	large := `{"path":"/home/me/src/notes.txt","content":"` + strings.Repeat(`hello, world \"quoted\" é `, 400) + `","options":{"mode":"0644","tags":["a","b","c"],"nested":[{"x":1.5e3,"y":null,"z":true}]}}`
	return []struct {
		name string
		raw  []byte
	}{
		{"small", []byte(`{"path":"/home/me/src/notes.txt","content":"hello"}`)},
		{"large", []byte(large)},
		{"many_keys", []byte(many.String())},
	}
}

// BenchmarkCheckArguments measures CheckArguments against the recursive
// validator it replaced (the baseline), interleaved in the same run.
func BenchmarkCheckArguments(b *testing.B) {
	for _, in := range benchArguments() {
		if baselineCheckArguments(in.raw) != nil || CheckArguments(in.raw) != nil {
			b.Fatalf("%s: refused", in.name)
		}
		b.Run(in.name, func(b *testing.B) {
			interleaved(b, func() { _ = baselineCheckArguments(in.raw) }, func() { _ = CheckArguments(in.raw) })
		})
	}
}

// interleaved runs base and cand alternately in small batches, so that
// whatever else loads the machine falls on both alike, and reports each
// one's time per call and the median of the per-batch ratios cand/base.
func interleaved(b *testing.B, base, cand func()) {
	const batch = 32
	var ratios []float64
	var tb, tc time.Duration
	calls := 0
	for b.Loop() {
		t0 := time.Now()
		for range batch {
			base()
		}
		t1 := time.Now()
		for range batch {
			cand()
		}
		t2 := time.Now()
		tb += t1.Sub(t0)
		tc += t2.Sub(t1)
		ratios = append(ratios, float64(t2.Sub(t1))/float64(t1.Sub(t0)))
		calls += batch
	}
	slices.Sort(ratios)
	b.ReportMetric(float64(tb.Nanoseconds())/float64(calls), "baseline-ns/call")
	b.ReportMetric(float64(tc.Nanoseconds())/float64(calls), "new-ns/call")
	b.ReportMetric(ratios[len(ratios)/2], "new/baseline")
}
