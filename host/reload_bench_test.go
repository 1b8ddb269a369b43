package host_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// BenchmarkCheckPolicySnapshot measures what taking the policy generation
// costs a decision: "counted" is Check as it is (an atomic load and a
// counted use of the generation, released at the end), "uncounted" the
// same decision with a plain load, measured block by block in turn in the
// same run (a busy machine slows both alike), each first in every other
// round. It reports the median of the
// per-block ratios, "counted/uncounted", and each case's ns per call.
func BenchmarkCheckPolicySnapshot(b *testing.B) {
	h := testhost.New(b, benchConfig, host.Defaults())
	call := host.Call{Session: "s", Server: "fs", Tool: tool(b, writeFile), Arguments: json.RawMessage(`{"path":"/home/me/src/notes.txt","content":"hello"}`)}
	ctx := context.Background()
	h.Check(ctx, call) // pin
	cases := []func() host.Decision{
		func() host.Decision { return host.CheckUncounted(h, ctx, call) },
		func() host.Decision { return h.Check(ctx, call) },
	}
	const block = 32
	var total [2]time.Duration
	ratios := make([]float64, 0, b.N)
	for i := 0; i < b.N; i++ {
		var took [2]time.Duration
		for o := range cases {
			j := (o + i) % 2 // alternate which runs first
			f := cases[j]
			start := time.Now()
			for k := 0; k < block; k++ {
				if f().Decision != host.Ask {
					b.Fatal("unexpected decision")
				}
			}
			took[j] = time.Since(start)
			total[j] += took[j]
		}
		ratios = append(ratios, float64(took[1])/float64(took[0]))
	}
	slices.Sort(ratios)
	b.ReportMetric(float64(total[0].Nanoseconds())/float64(b.N*block), "uncounted-ns/call")
	b.ReportMetric(float64(total[1].Nanoseconds())/float64(b.N*block), "counted-ns/call")
	b.ReportMetric(ratios[len(ratios)/2], "counted/uncounted")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkTakePolicy is the count alone: taking and releasing the
// current policy, uncontended.
func BenchmarkTakePolicy(b *testing.B) {
	h := testhost.New(b, benchConfig, host.Defaults())
	for i := 0; i < b.N; i++ {
		host.TakePolicy(h)
	}
}
