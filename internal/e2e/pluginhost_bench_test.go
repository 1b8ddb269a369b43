package e2e

import (
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// roundTripPolicies are the first-party plugins that act on a call, as in
// host's BenchmarkCheckWithPlugins: trifecta (check and observe) and
// argguard (check).
const roundTripPolicies = "[policies.trifecta]\nbuiltin = \"trifecta\"\n" +
	"[policies.argguard]\nbuiltin = \"argguard\"\n" +
	`config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }, { tool = "*", arg = "command", ask_regex = 'rm\s+-rf' }]` + "\n"

// BenchmarkRoundTripPlugins times a tools/call round trip through
// toolwarden wrap without plugins and with trifecta and argguard,
// interleaved call by call in one run, and reports both mean and median
// (p50) latencies and their ratios plugins/none (bar: <= 1.1 against
// server-everything's echo). Both wrap processes read a config file, so
// that the plugins are the only difference. The
// call is allowed either way: echo reads no private data, so trifecta
// abstains after its observe, and no argguard rule matches.
func BenchmarkRoundTripPlugins(b *testing.B) {
	cfg := writeFile(b, "plugins.toml", roundTripPolicies)
	empty := writeFile(b, "none.toml", "# no policies\n")
	for _, up := range upstreamsForBench(b) {
		b.Run(up.name, func(b *testing.B) {
			wrap := func(extra ...string) *goClient {
				args := append([]string{"wrap", "--quiet", "--app", "bench", "--approvals", filepath.Join(b.TempDir(), "a.json")}, extra...)
				return startGo(b, true, nil, twBin, append(append(args, "--"), up.cmd...)...)
			}
			clients := []*goClient{wrap("--config", empty), wrap("--config", cfg)}
			for range 200 { // warm up both paths (and the plugins' instances)
				for _, c := range clients {
					if _, isErr := c.call(b, up.tool, up.args); isErr {
						b.Fatal("warm-up call failed")
					}
				}
			}
			// The machine is shared and noisy: besides the totals, the
			// ratio of the two paths' median (p50) call latencies.
			var total [2]time.Duration
			lat := [2][]time.Duration{make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for k, c := range clients {
					t0 := time.Now()
					if _, isErr := c.call(b, up.tool, up.args); isErr {
						b.Fatalf("call %d failed", k)
					}
					dt := time.Since(t0)
					total[k] += dt
					lat[k] = append(lat[k], dt)
				}
			}
			b.StopTimer()
			p50 := func(ds []time.Duration) float64 {
				slices.Sort(ds)
				return float64(ds[len(ds)/2].Nanoseconds())
			}
			none, plugins := p50(lat[0]), p50(lat[1])
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
			b.ReportMetric(per(total[0]), "none-ns/call")
			b.ReportMetric(per(total[1]), "plugins-ns/call")
			b.ReportMetric(float64(total[1])/float64(total[0]), "plugins/none")
			b.ReportMetric(none, "none-p50-ns")
			b.ReportMetric(plugins, "plugins-p50-ns")
			b.ReportMetric(plugins/none, "p50-plugins/none")
		})
	}
}
