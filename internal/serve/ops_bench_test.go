package serve

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkOpsChain is what the operations layer adds to one tools/call
// before mcp-go sees it (body read and classified, drain gate, rate limit,
// answer watched), against the bare handler, in memory: compare the two
// sub-benchmarks' ns/op in one run.
func BenchmarkOpsChain(b *testing.B) {
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fs__read_text_file","arguments":{"path":"/tmp/notes.txt"}}}`
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 512)
		for {
			if _, err := r.Body.Read(buf); err != nil {
				break
			}
		}
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}`))
	})
	f := newFront(nil, FrontOptions{})
	chain := limitBody(DefaultMaxRequestBytes, DefaultReadTimeout, f.gate(limitRate(newRateLimits(1e6, 1e6), inner)))
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"bare", inner}, {"ops", chain}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
				c.h.ServeHTTP(httptest.NewRecorder(), r)
			}
		})
	}
}
