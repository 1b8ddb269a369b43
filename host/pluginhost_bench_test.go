package host_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
)

// BenchmarkCheckWithPluginsScaling is the trifecta+argguard decision of
// BenchmarkCheckWithPlugins serially and from GOMAXPROCS goroutines (each
// its own session, as a host serving several clients), alternating in
// batches within one run, and reports the scaling: serial ns/op over
// parallel ns/op (2 on two idle cores). A shared machine lowers it; take
// several runs.
func BenchmarkCheckWithPluginsScaling(b *testing.B) {
	h, calls := scalingHost(b)
	ctx := context.Background()
	procs := len(calls)
	const batch = 500
	var serial, parallel time.Duration
	var nSerial, nParallel int
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += 2 * batch {
		t0 := time.Now()
		for range batch {
			h.Check(ctx, calls[0])
		}
		serial += time.Since(t0)
		nSerial += batch
		var next atomic.Int64
		var wg sync.WaitGroup
		t0 = time.Now()
		for g := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= batch {
					h.Check(ctx, calls[g])
				}
			}()
		}
		wg.Wait()
		parallel += time.Since(t0)
		nParallel += batch
	}
	b.StopTimer()
	s := float64(serial.Nanoseconds()) / float64(nSerial)
	p := float64(parallel.Nanoseconds()) / float64(nParallel)
	b.ReportMetric(s, "serial-ns/op")
	b.ReportMetric(p, "parallel-ns/op")
	b.ReportMetric(s/p, "scaling")
}

// scalingHost is the host of the scaling benchmarks: trifecta and argguard
// on a call that asks (its session tainted by an observe), and one such
// call per GOMAXPROCS goroutine, each in a session of its own, checked
// once so that every later Check of it repeats.
func scalingHost(b *testing.B) (*host.Host, []host.Call) {
	b.Helper()
	const policies = "\n[policies.trifecta]\nbuiltin = \"trifecta\"\n" +
		"\n[policies.argguard]\nbuiltin = \"argguard\"\n" +
		`config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }, { tool = "*", arg = "command", ask_regex = 'rm\s+-rf' }]` + "\n"
	h := newHost(b, benchConfig+"[apps.fs.hints]\nreads_private_data = true\nsees_untrusted_content = true\ncan_exfiltrate = true\n"+policies,
		host.Defaults().WithPluginCacheDir(pluginCache))
	tl := tool(b, writeFile)
	ctx := context.Background()
	calls := make([]host.Call, runtime.GOMAXPROCS(0))
	for i := range calls {
		calls[i] = host.Call{Session: "s" + strconv.Itoa(i), Server: "fs", Tool: tl, Arguments: json.RawMessage(`{"path":"/home/me/src/notes.txt","content":"hello"}`)}
		d := h.Check(ctx, calls[i])
		h.Observe(ctx, calls[i], &d, host.Result{})
		if d = h.Check(ctx, calls[i]); d.Decision != host.Ask {
			b.Fatalf("%+v", d.Reasons)
		}
	}
	return h, calls
}
