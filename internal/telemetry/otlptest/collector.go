// Package otlptest runs the real OpenTelemetry Collector (scripts/otelcol/bin/toolwarden-otelcol,
// built by scripts/setup.sh from scripts/otelcol) for a test and reads back
// what it received: telemetry is tested against the receiver a team runs,
// not a mock exporter inside the process.
//
//	col := otlptest.Start(t)
//	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.HTTPEndpoint)
//	... export ...
//	spans := col.WaitSpans(t, func(s []otlptest.Span) bool { return len(s) >= 2 })
//
// The collector writes each signal as OTLP JSON lines (its file exporter);
// the readers here turn those into flat values with attributes as a map.
package otlptest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// Binary is where scripts/setup.sh builds the collector.
func Binary() string { return testkit.Path("scripts", "otelcol", "bin", "toolwarden-otelcol") }

// Collector is a running collector with an OTLP receiver on 127.0.0.1.
type Collector struct {
	// HTTPEndpoint and GRPCEndpoint are OTEL_EXPORTER_OTLP_ENDPOINT values
	// ("http://127.0.0.1:PORT") for the two protocols.
	HTTPEndpoint, GRPCEndpoint string
	dir                        string
	stderr                     *testkit.Buffer
}

// Start runs a collector until the test ends. It skips the test when the
// binary is not built (fails it under TOOLWARDEN_REQUIRE_TOOLCHAINS=1),
// and fails it when the collector does not start listening.
func Start(t testing.TB) *Collector {
	t.Helper()
	bin := Binary()
	_, err := os.Stat(bin)
	testkit.Need(t, "the OpenTelemetry Collector (scripts/otelcol/bin/toolwarden-otelcol)", err)
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // a free port can be taken between choosing and binding it
		c, err := start(t, bin)
		if err == nil {
			return c
		}
		lastErr = err
	}
	t.Fatalf("otlptest: %v", lastErr)
	return nil
}

func start(t testing.TB, bin string) (*Collector, error) {
	dir := t.TempDir()
	httpPort, grpcPort, err := freePorts()
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(cfg, []byte(config(dir, httpPort, grpcPort)), 0o600); err != nil {
		return nil, err
	}
	c := &Collector{
		HTTPEndpoint: fmt.Sprintf("http://127.0.0.1:%d", httpPort),
		GRPCEndpoint: fmt.Sprintf("http://127.0.0.1:%d", grpcPort),
		dir:          dir,
		stderr:       &testkit.Buffer{},
	}
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = c.stderr, c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := waitListening(exited, httpPort, grpcPort); err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("collector did not start: %w\n%s", err, c.stderr.String())
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	return c, nil
}

// config is the collector's configuration: OTLP in, one JSON-lines file
// per signal out, flushed often so a test waits milliseconds, and no
// telemetry of its own (its metrics port would clash between tests).
func config(dir string, httpPort, grpcPort int) string {
	file := func(signal string) string {
		return fmt.Sprintf("  file/%s:\n    path: %s\n    flush_interval: 20ms\n", signal, filepath.Join(dir, signal+".jsonl"))
	}
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
exporters:
%s%s%sservice:
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    traces: {receivers: [otlp], exporters: [file/traces]}
    metrics: {receivers: [otlp], exporters: [file/metrics]}
    logs: {receivers: [otlp], exporters: [file/logs]}
`, grpcPort, httpPort, file("traces"), file("metrics"), file("logs"))
}

func freePorts() (int, int, error) {
	var ports [2]int
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, err
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports[0], ports[1], nil
}

func waitListening(exited <-chan error, ports ...int) error {
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range ports {
		for {
			conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", p), time.Second)
			if err == nil {
				conn.Close()
				break
			}
			select {
			case err := <-exited:
				return fmt.Errorf("exited (%v) before listening on port %d", err, p)
			default:
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("not listening on port %d after 30s", p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// Stderr is what the collector printed, for a failing test's message.
func (c *Collector) Stderr() string { return c.stderr.String() }

// lines returns the JSON lines the collector has written for signal.
func (c *Collector) lines(signal string) ([][]byte, error) {
	b, err := os.ReadFile(filepath.Join(c.dir, signal+".jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out, nil
}

// waitFor polls read until done says it has what the test needs, and
// fails the test after 20 seconds with what it had.
func waitFor[T any](t testing.TB, c *Collector, what string, read func() ([]T, error), done func([]T) bool) []T {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, err := read()
		if err != nil {
			t.Fatalf("otlptest: reading the collector's %s: %v", what, err)
		}
		if done(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("otlptest: the collector did not receive the %s the test waits for within 20s; it has %d:\n%s\ncollector stderr:\n%s",
				what, len(got), dump(got), c.Stderr())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func dump[T any](items []T) string {
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "  %+v\n", it)
	}
	return b.String()
}
