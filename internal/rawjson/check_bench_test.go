package rawjson

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkCheck measures Check (Validate's scanner under the message rules)
// against the scanner it replaced (the baseline), interleaved in the
// same run, on messages the proxy relays: a tools/call, a large result,
// and a deeply nested one.
func BenchmarkCheck(b *testing.B) {
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/home/me/src/notes.txt","content":"hello"}}}`
	result := `{"jsonrpc":"2.0","id":8,"result":{"content":[` + strings.Repeat(`{"type":"text","text":"line of output with \"escapes\" and é\n"},`, 1000) + `{"type":"text","text":""}],"isError":false}}`
	deep := strings.Repeat(`{"a":[`, 2000) + "1" + strings.Repeat(`]}`, 2000)
	for _, in := range []struct{ name, msg string }{{"call", call}, {"result", result}, {"deep", deep}} {
		msg := []byte(in.msg)
		if baselineCheck(msg) != OK || Check(msg) != OK {
			b.Fatalf("%s: not OK", in.name)
		}
		b.Run(in.name, func(b *testing.B) {
			interleaved(b, func() { _ = baselineCheck(msg) }, func() { _ = Check(msg) })
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
