package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// benchUpstream is a server both benchmarks run against, and the call
// BenchmarkRoundTrip makes to it.
type benchUpstream struct {
	name string
	cmd  []string
	tool string
	args map[string]any
}

// upstreamsForBench are our Go test server (a fast upstream answering echo:
// the worst case for a proxy's ratio), server-everything (a typical Node.js
// server, echo) and server-filesystem reading a small file (the README's
// example: a tool that does real work, as agents' tools do).
func upstreamsForBench(b *testing.B) []benchUpstream {
	echo := map[string]any{"message": "hello"}
	ups := []benchUpstream{{"testserver", []string{testServer, "-state", b.TempDir()}, "echo", echo}}
	if _, err := exec.LookPath("node"); err == nil {
		bin := filepath.Join(root, "scripts", "npm", "node_modules", ".bin")
		dir := b.TempDir()
		file := filepath.Join(dir, "notes.txt")
		if err := os.WriteFile(file, []byte("a small file\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		ups = append(ups,
			benchUpstream{"server-everything", []string{filepath.Join(bin, "mcp-server-everything")}, "echo", echo},
			benchUpstream{"server-filesystem", []string{filepath.Join(bin, "mcp-server-filesystem"), dir}, "read_text_file", map[string]any{"path": file}})
	}
	return ups
}

// BenchmarkRoundTrip times a tools/call round trip (the call of
// upstreamsForBench, allowed by policy) from mcp-go's client to an upstream
// three ways, interleaved call by call in one run: directly; through a byte
// relay (testserver -relay: a process that copies bytes both ways and
// parses nothing, the floor for any stdio proxy); and through toolwarden
// wrap. It reports the three
// latencies and the ratios wrap/direct (design bar: <= 1.15), relay/direct
// and wrap/relay. Every client speaks protocol 2025-11-25, as today's agents
// do.
func BenchmarkRoundTrip(b *testing.B) {
	for _, up := range upstreamsForBench(b) {
		b.Run(up.name, func(b *testing.B) {
			direct := startGo(b, true, nil, up.cmd[0], up.cmd[1:]...)
			relayed := startGo(b, true, nil, testServer, append([]string{"-relay", "--"}, up.cmd...)...)
			wrapped := startGo(b, true, nil, twBin, append([]string{"wrap", "--quiet", "--app", "bench", "--approvals", filepath.Join(b.TempDir(), "a.json"), "--"}, up.cmd...)...)
			clients := []*goClient{direct, relayed, wrapped}
			for range 200 { // warm up every path
				for _, c := range clients {
					c.call(b, up.tool, up.args)
				}
			}
			var total [3]time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for k, c := range clients {
					t0 := time.Now()
					if _, isErr := c.call(b, up.tool, up.args); isErr {
						b.Fatalf("call %d failed", k)
					}
					total[k] += time.Since(t0)
				}
			}
			b.StopTimer()
			per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) }
			b.ReportMetric(per(total[0]), "direct-ns/call")
			b.ReportMetric(per(total[1]), "relay-ns/call")
			b.ReportMetric(per(total[2]), "wrap-ns/call")
			b.ReportMetric(float64(total[2])/float64(total[0]), "wrap/direct")
			b.ReportMetric(float64(total[1])/float64(total[0]), "relay/direct")
			b.ReportMetric(float64(total[2])/float64(total[1]), "wrap/relay")
		})
	}
}

// BenchmarkWarmStart times process start to the first tools/list answer,
// for the upstream alone and for toolwarden wrap in front of it (with the
// trifecta plugin configured and its compile cache warm), and reports the
// difference (design bar: <= 150 ms beyond the upstream's own start).
func BenchmarkWarmStart(b *testing.B) {
	cfg := writeFile(b, "warm.toml", "[policies.trifecta]\nbuiltin = \"trifecta\"\n")
	for _, up := range upstreamsForBench(b) {
		b.Run(up.name, func(b *testing.B) {
			wrap := append([]string{twBin, "wrap", "--quiet", "--config", cfg, "--app", "bench", "--approvals", filepath.Join(b.TempDir(), "a.json"), "--"}, up.cmd...)
			firstList(b, wrap) // fill the plugin compile cache
			var dt, wt time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				dt += firstList(b, up.cmd)
				wt += firstList(b, wrap)
			}
			b.StopTimer()
			b.ReportMetric(float64(dt.Milliseconds())/float64(b.N), "direct-ms")
			b.ReportMetric(float64(wt.Milliseconds())/float64(b.N), "wrap-ms")
			b.ReportMetric(float64((wt-dt).Milliseconds())/float64(b.N), "overhead-ms")
		})
	}
}

// firstList starts argv, sends initialize, initialized and tools/list at
// once, and returns the time until the tools/list answer arrives.
func firstList(b *testing.B, argv []string) time.Duration {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	fmt.Fprint(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`+"\n")
	fmt.Fprint(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	fmt.Fprint(in, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	br := bufio.NewReaderSize(out, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(line, &m) == nil && string(m.ID) == "2" && len(m.Result) > 0 {
			d := time.Since(start)
			go func() { _, _ = io.Copy(io.Discard, br) }()
			return d
		}
		if err != nil {
			b.Fatalf("%s exited before answering tools/list: %v", argv[0], err)
		}
	}
}
