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
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/serve"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/plugins"
)

// BenchmarkServeCallInProcess is BenchmarkServeCall's serve case at 100
// sessions with the gateway in this process (internal/serve set up as the
// command sets it up: default host settings, an audit log), so that a CPU
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
	srv := serve.New(h, []serverspec.Spec{spec}, serve.Options{Listen: l.Addr().String(), Logger: quiet})
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.MCPHandler())
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
