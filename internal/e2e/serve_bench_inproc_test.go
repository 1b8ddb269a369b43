package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/serve"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/plugins"
)

// BenchmarkServeCallInProcess is BenchmarkServeCall's serve case at 100
// sessions with the gateway in this process (internal/serve set up as the
// command sets it up: default host settings, an audit log, the [serve]
// options, the identity middleware in front), so that a CPU
// profile shows where serve spends its time; the product itself has no
// profiling endpoint. The upstream still runs in its own process. The
// profile holds the clients too: look under net/http.(*conn).serve, the
// server's side.
//
//	go test ./internal/e2e -run '^$' -bench 'BenchmarkServeCallInProcess' -benchtime 5x -cpuprofile serve.cpu
//	go tool pprof -top -focus 'net/http.\(\*conn\).serve' internal/e2e/e2e.test serve.cpu
func BenchmarkServeCallInProcess(b *testing.B) {
	const n = 100
	upAddr := benchFreeAddr(b)
	startBenchProc(b, "upstream testserver", testServer, "-http", upAddr, "-count-echo", "-state", b.TempDir())
	benchWaitDial(b, upAddr)
	url := startServeInProcess(b, "http://"+upAddr+"/mcp")
	c := benchCase{"serve", url, "bench__echo", os.Getpid()}
	l := &benchLoad{c: c, sessions: openBenchSessions(b, b, c, n, mcp.ProtocolVersion20251125, func() *http.Client { return benchHTTPClient(n) })}
	l.reset()
	l.round(b, 2, false)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l.round(b, max(8, 512/n), true)
	}
	b.StopTimer()
	reportServeCall(b, []*benchLoad{l}, n)
}

// startServeInProcess runs internal/serve in front of upstream in this
// process, on a free loopback port, and returns its /mcp URL.
func startServeInProcess(b *testing.B, upstream string) string {
	b.Helper()
	cfg := testhost.Config(b, fmt.Sprintf(serveBenchConfig, upstream))
	af, err := audit.OpenFile(filepath.Join(b.TempDir(), "audit.jsonl"), audit.DefaultRotation)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { af.Close() })
	ctx := context.Background()
	settings := host.Defaults().WithBuiltins(plugins.Modules()).WithApprovalsFile(filepath.Join(b.TempDir(), "approvals.json")).WithAuditLog(af)
	h, err := host.New(ctx, cfg, settings)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close(context.Background()) })
	spec, err := serverspec.FromConfig(cfg.Servers["bench"], os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sc := cfg.Serve
	opts := serve.Options{
		Listen: l.Addr().String(), ResourceURL: "http://" + l.Addr().String() + "/mcp", Logger: quiet,
		MaxRequestBytes: int64(sc.MaxRequestKiB) << 10, MaxResultBytes: sc.MaxResultKiB << 10,
		RatePerSecond: sc.RateLimit.CallsPerSecond, RateBurst: sc.RateLimit.Burst, IdleSessionTTL: sc.IdleSessionTTL,
	}
	srv := serve.New(h, []serverspec.Spec{spec}, opts)
	mux := http.NewServeMux()
	mux.Handle("/mcp", identity.Middleware(nil, identity.MetadataURL(opts.ResourceURL))(srv.MCPHandler()))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(l) }()
	if err := srv.Start(ctx); err != nil {
		b.Fatalf("serve in process: starting the upstream: %v", err)
	}
	b.Cleanup(func() {
		_ = hs.Close()
		_ = srv.Close(context.Background())
	})
	return "http://" + l.Addr().String() + "/mcp"
}

// BenchmarkServeIdleSessionHeapInProcess is BenchmarkServeIdleSessionMemory
// for serve in this process, read as live heap after a collection instead
// of resident memory (no garbage, no stacks, no connection buffers outside
// the heap): 1000 sessions, each its own connection, that listed the tools
// and called echo once. The clients live in this process too, so their heap
// is measured alone first, against the upstream, and taken off. With
// TOOLWARDEN_BENCH_HEAP_PROFILE=FILE it writes a heap profile while serve's
// sessions are open.
//
//	go test ./internal/e2e -run '^$' -bench 'BenchmarkServeIdleSessionHeapInProcess' -benchtime 1x
func BenchmarkServeIdleSessionHeapInProcess(b *testing.B) {
	const n = 1000
	upAddr := benchFreeAddr(b)
	up := startBenchProc(b, "upstream testserver", testServer, "-http", upAddr, "-count-echo", "-state", b.TempDir())
	benchWaitDial(b, upAddr)
	direct := benchCase{"direct", "http://" + upAddr + "/mcp", "echo", up.Process.Pid}
	inproc := benchCase{"serve", startServeInProcess(b, direct.url), "bench__echo", os.Getpid()}
	clients := idleSessionHeapKiB(b, direct, n)
	total := idleSessionHeapKiB(b, inproc, n)
	b.ReportMetric(clients, "clients-heap-KiB/session")
	b.ReportMetric(total-clients, "serve-heap-KiB/session")
	b.ReportMetric(0, "ns/op")
}

// idleSessionHeapKiB is how much this process's live heap grew, per
// session, for n idle sessions to c.
func idleSessionHeapKiB(b *testing.B, c benchCase, n int) float64 {
	b.Helper()
	own := func() *http.Client { return benchHTTPClient(1) }
	useBenchSessions(b, c, openBenchSessions(b, b, c, 1, mcp.ProtocolVersion20251125, own))
	before := benchLiveHeap()
	ss := openBenchSessions(b, b, c, n, mcp.ProtocolVersion20251125, own)
	useBenchSessions(b, c, ss)
	time.Sleep(time.Second)
	after := benchLiveHeap()
	if path := os.Getenv("TOOLWARDEN_BENCH_HEAP_PROFILE"); path != "" && c.name == "serve" {
		writeHeapProfile(b, path) // what holds the sessions' memory: go tool pprof -sample_index=inuse_space
	}
	runtime.KeepAlive(ss)
	return float64(after-before) / 1024 / float64(n)
}

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}

// benchLiveHeap is the bytes of live heap objects after a full collection
// (HeapAlloc: spans freed objects left half used would count in HeapInuse
// and make a second run's growth look smaller).
func benchLiveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
