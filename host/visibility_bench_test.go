package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"syscall"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// processCPU is the process's user and system CPU time so far, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// staticHider is a Go list plugin that always hides the same tool.
type staticHider struct{ name string }

func (staticHider) Name() string { return "static" }
func (p staticHider) List(context.Context, *policy.ListInput) ([]string, error) {
	return []string{p.name}, nil
}

// BenchmarkCheckVisibility is the cost of the call-time visibility check:
// host.Check with a list plugin configured against host.Check without one
// ("none"), in the same run. "wasm-list" is the list-only WebAssembly test
// plugin (hidelist.wat), "native-list" a Go list plugin. In "same session"
// the session listed its tools first, so a call reuses that list; in
// "fresh session" every call is a session's first, so the call runs the
// list event itself (the hook adapters' and `toolwarden check`'s case).
func BenchmarkCheckVisibility(b *testing.B) {
	wasm := fmt.Sprintf("\n[policies.hider]\nwasm = %q\nconfig = { hide = [\"read_file\"] }\n", hidelistWasm)
	for _, c := range []struct {
		name, policies string
		settings       host.Settings
	}{
		{"none", "", host.Defaults()},
		{"wasm-list", wasm, host.Defaults()},
		{"native-list", "", host.Defaults().WithPlugin(staticHider{"read_file"})},
	} {
		for _, fresh := range []bool{false, true} {
			name := "same-session/" + c.name
			if fresh {
				name = "fresh-session/" + c.name
			}
			b.Run(name, func(b *testing.B) {
				h := testhost.New(b, benchConfig+c.policies, c.settings)
				w, r := tool(b, writeFile), tool(b, readFile)
				ctx := context.Background()
				args := json.RawMessage(`{"path":"/home/me/src/notes.txt","content":"hello"}`)
				h.Filter(ctx, "s", "fs", []*host.Tool{w, r})
				want := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: w, Arguments: args}).Decision
				if want == host.Deny {
					b.Fatal("the benchmark call is denied")
				}
				sessions := make([]string, 1024)
				for i := range sessions {
					sessions[i] = "s"
					if fresh {
						sessions[i] = "fresh-" + strconv.Itoa(i)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := processCPU()
				for i := 0; i < b.N; i++ {
					id := sessions[i%len(sessions)]
					if d := h.Check(ctx, host.Call{Session: id, Server: "fs", Tool: w, Arguments: args}); d.Decision != want {
						b.Fatalf("%s: %+v", d.Decision, d.Reasons)
					}
					if fresh && i%len(sessions) == len(sessions)-1 {
						b.StopTimer()
						paused := processCPU()
						for _, s := range sessions {
							h.EndSession(s)
						}
						cpu0 += processCPU() - paused
						b.StartTimer()
					}
				}
				// CPU time is steadier than wall time on a shared machine.
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
