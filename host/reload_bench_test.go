package host_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
)

// BenchmarkCheckPolicySnapshot measures what taking the policy generation
// costs a decision: "counted" is Check as it is (an atomic load and a
// counted use of the generation, released at the end), "uncounted" the
// same decision with a plain load, measured block by block in turn in the
// same run. "counted/uncounted" is the ratio; "parallel" runs the counted
// case on every core at once, where the shared count is contended.
func BenchmarkCheckPolicySnapshot(b *testing.B) {
	h := newHost(b, benchConfig, host.Defaults())
	call := host.Call{Session: "s", Server: "fs", Tool: tool(b, writeFile), Arguments: json.RawMessage(`{"path":"/home/me/src/notes.txt","content":"hello"}`)}
	ctx := context.Background()
	h.Check(ctx, call) // pin
	b.Run("interleaved", func(b *testing.B) {
		cases := []func() host.Decision{
			func() host.Decision { return host.CheckUncounted(h, ctx, call) },
			func() host.Decision { return h.Check(ctx, call) },
		}
		const block = 64
		var total [2]time.Duration
		for i := 0; i < b.N; i++ {
			for j, f := range cases {
				start := time.Now()
				for k := 0; k < block; k++ {
					if f().Decision != host.Ask {
						b.Fatal("unexpected decision")
					}
				}
				total[j] += time.Since(start)
			}
		}
		b.ReportMetric(float64(total[0].Nanoseconds())/float64(b.N*block), "uncounted-ns/call")
		b.ReportMetric(float64(total[1].Nanoseconds())/float64(b.N*block), "counted-ns/call")
		b.ReportMetric(float64(total[1])/float64(total[0]), "counted/uncounted")
		b.ReportMetric(0, "ns/op")
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				h.Check(ctx, call)
			}
		})
	})
	b.Run("parallel-uncounted", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				host.CheckUncounted(h, ctx, call)
			}
		})
	})
}
