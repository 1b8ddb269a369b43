package proxy

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
)

// BenchmarkSettleUnobserved is what the proxy spends after a call returns
// when an observer is configured but matches no app of this call
// (trifecta scoped to "notes", the call to "fs"): "gate-any" gates on
// Host.Observes (reads the result's text, then runs Observe, which finds
// no matching plugin), "gate-call" is settle, gating on Host.ObservesCall
// (checks the result's shape only). Interleaved in one run; the ratio is
// gate-call/gate-any.
func BenchmarkSettleUnobserved(b *testing.B) {
	ctx := context.Background()
	cfg, err := config.LoadBytes("bench.toml", []byte(`
[mcp_servers.fs]
command = "fs-server"
[mcp_servers.notes]
command = "notes-server"
[policies.trifecta]
builtin = "trifecta"
apps = ["notes"]
`))
	if err != nil {
		b.Fatal(err)
	}
	h, err := host.New(ctx, cfg, host.Defaults().WithPluginCacheDir(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	tl, err := host.ParseTool([]byte(`{"name":"read_file","annotations":{"readOnlyHint":true}}`))
	if err != nil {
		b.Fatal(err)
	}
	call := host.Call{Session: "s", Server: "fs", Tool: tl, Arguments: json.RawMessage(`{"path":"/home/me/notes.txt"}`)}
	d := h.Check(ctx, call)
	p := &Proxy{h: h}
	rt := &route{name: "fs__read_file", tool: tl}
	raw := json.RawMessage(`{"content":[{"type":"text","text":"the notes: buy milk, call the bank, water the plants"}],"isError":false}`)
	if !h.Observes() || h.ObservesCall(&d) {
		b.Fatalf("Observes = %v, ObservesCall = %v: want an observer that does not match", h.Observes(), h.ObservesCall(&d))
	}
	gateAny := func() {
		text, isErr, ok := summarize(raw, h.Observes())
		if !ok {
			b.Fatal("malformed")
		}
		h.Observe(ctx, call, &d, host.Result{Text: text, IsError: isErr})
	}
	gateCall := func() {
		if out := p.settle(ctx, rt, call, &d, raw, nil); out.raw == nil {
			b.Fatal("no result")
		}
	}
	const batch = 64
	var tAny, tCall int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tAny += timed(func() {
			for range batch {
				gateAny()
			}
		})
		tCall += timed(func() {
			for range batch {
				gateCall()
			}
		})
	}
	b.StopTimer()
	b.ReportMetric(float64(tAny)/float64(b.N*batch), "gate-any-ns/op")
	b.ReportMetric(float64(tCall)/float64(b.N*batch), "gate-call-ns/op")
	b.ReportMetric(float64(tCall)/float64(tAny), "gate-call/gate-any")
}

// timed is how long f took, in nanoseconds.
func timed(f func()) int64 {
	t0 := time.Now()
	f()
	return time.Since(t0).Nanoseconds()
}
