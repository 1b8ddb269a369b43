package telemetry_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/telemetry"
	"github.com/toolwarden/toolwarden/internal/telemetry/otlptest"
)

// closedEndpoint is an address where nothing listens.
func closedEndpoint(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// A collector that is down must cost the gateway nothing but the lost
// telemetry: calls do not wait for it, and shutdown gives up at its deadline.
func TestACollectorThatIsDownNeverHoldsUpCallsOrShutdown(t *testing.T) {
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(strings.ReplaceAll(protocol, "/", "-"), func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", closedEndpoint(t))
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			tel, err := telemetry.Setup(context.Background(), "toolwarden", "v-test")
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			for i := 0; i < 2000; i++ {
				ctx, span := tel.StartServer(context.Background(), telemetry.Request{Method: "tools/call", Target: "read_file"})
				span.Decision("allow", nil, "")
				tel.ExportAuditContext(ctx, audit.Relay{Server: "fs", Method: "roots/list", Outcome: "answered"})
				span.End("")
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("2000 calls took %v with the collector down: calls wait for it", d)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start = time.Now()
			_ = tel.Shutdown(ctx) // an error is expected: nothing received the data
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("Shutdown took %v past its 1s deadline", d)
			}
		})
	}
}

// A client cannot break a call, or join another trace's span, with what it
// writes in _meta: a malformed traceparent starts a new trace.
func TestAMalformedTraceparentStartsANewTraceAndTheCallIsStillRecorded(t *testing.T) {
	col := otlptest.Start(t)
	pointAt(t, col, "http/protobuf")
	tel, err := telemetry.Setup(context.Background(), "toolwarden", "v-test")
	if err != nil {
		t.Fatal(err)
	}
	bad := []string{
		`{"traceparent":"00-` + clientTraceID + `-` + clientSpanID + `"}`,               // no flags
		`{"traceparent":"00-00000000000000000000000000000000-` + clientSpanID + `-01"}`, // zero trace id
		`{"traceparent":"ff-` + clientTraceID + `-` + clientSpanID + `-01"}`,            // forbidden version
		`{"traceparent":["00-` + clientTraceID + `-` + clientSpanID + `-01"]}`,          // not a string
		`"_meta is a string"`,
	}
	for i, meta := range bad {
		_, span := tel.StartServer(context.Background(), telemetry.Request{Method: "tools/call", Target: "t", RequestID: json.RawMessage(`"bad-` + string(rune('a'+i)) + `"`), Meta: json.RawMessage(meta)})
		span.End("")
	}
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := col.WaitSpans(t, func(s []otlptest.Span) bool { return len(s) == len(bad) })
	for _, s := range spans {
		if s.ParentSpanID != "" || s.TraceID == clientTraceID || s.TraceID == strings.Repeat("0", 32) {
			t.Errorf("span %v: trace %s parent %q, want a new root trace", s.Attributes["jsonrpc.request.id"], s.TraceID, s.ParentSpanID)
		}
	}
}

// Each signal is chosen on its own, and the service is named by
// OTEL_SERVICE_NAME when it is set.
func TestEachSignalIsExportedOnlyWhenConfiguredAndTheServiceNameComesFromTheEnvironment(t *testing.T) {
	col := otlptest.Start(t)
	pointAt(t, col, "grpc")
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	t.Setenv("OTEL_LOGS_EXPORTER", "none")
	t.Setenv("OTEL_SERVICE_NAME", "gateway-eu")
	tel, err := telemetry.Setup(context.Background(), "toolwarden", "v-test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, span := tel.StartServer(context.Background(), telemetry.Request{Method: "tools/list"})
	tel.ExportAuditContext(ctx, audit.Relay{Server: "fs", Method: "roots/list", Outcome: "answered"})
	span.End("")
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	points := col.WaitHistograms(t, func(p []otlptest.HistogramPoint) bool { return len(p) > 0 })
	if points[0].Metric != "mcp.server.operation.duration" || points[0].Attributes["mcp.method.name"] != "tools/list" || points[0].Resource["service.name"] != "gateway-eu" {
		t.Errorf("metric %s %v from %v; want tools/list from service gateway-eu", points[0].Metric, points[0].Attributes, points[0].Resource)
	}
	if _, has := points[0].Attributes["gen_ai.operation.name"]; has {
		t.Errorf("tools/list carries gen_ai.operation.name: only tool calls are execute_tool")
	}
	time.Sleep(200 * time.Millisecond) // the collector flushes every 20ms: anything sent has landed
	if spans, _ := col.Spans(); len(spans) != 0 {
		t.Errorf("OTEL_TRACES_EXPORTER=none, yet the collector got %d spans", len(spans))
	}
	if logs, _ := col.Logs(); len(logs) != 0 {
		t.Errorf("OTEL_LOGS_EXPORTER=none, yet the collector got %d log records", len(logs))
	}
}

// Off, a request's telemetry costs no allocation at all.
func TestTelemetryThatIsOffAllocatesNothingPerRequest(t *testing.T) {
	tel, err := telemetry.Setup(context.Background(), "toolwarden", "v-test")
	if err != nil {
		t.Fatal(err)
	}
	if tel.Enabled() {
		t.Skip("the test process has OTEL_* variables that turn telemetry on")
	}
	r := telemetry.Request{Method: "tools/call", Target: "read_file", RequestID: json.RawMessage(`1`), Meta: json.RawMessage(`{"traceparent":"` + clientParent + `"}`)}
	allocs := testing.AllocsPerRun(1000, func() {
		ctx, span := tel.StartServer(context.Background(), r)
		span.Decision("allow", nil, "sha256:x")
		cctx, up := tel.StartClient(ctx, "fs", r)
		_ = telemetry.MetaMembers(cctx)
		up.End("")
		span.End("")
	})
	if allocs != 0 {
		t.Errorf("off telemetry allocates %v times per request, want 0", allocs)
	}
}

func BenchmarkRequestTelemetry(b *testing.B) {
	r := telemetry.Request{Method: "tools/call", Target: "read_file", ProtocolVersion: "2025-06-18", RequestID: json.RawMessage(`1`), Meta: json.RawMessage(`{"traceparent":"` + clientParent + `"}`)}
	run := func(b *testing.B, tel *telemetry.Telemetry) {
		b.ReportAllocs()
		for b.Loop() {
			ctx, span := tel.StartServer(context.Background(), r)
			span.Decision("allow", []string{"rule.allow"}, "sha256:x")
			cctx, up := tel.StartClient(ctx, "fs", r)
			_ = telemetry.MetaMembers(cctx)
			up.End("")
			span.End("")
		}
	}
	b.Run("none", func(b *testing.B) { run(b, nil) })
	b.Run("off", func(b *testing.B) {
		tel, err := telemetry.Setup(context.Background(), "toolwarden", "bench")
		if err != nil || tel.Enabled() {
			b.Skip("OTEL_* variables turn telemetry on here")
		}
		run(b, tel)
	})
	b.Run("on", func(b *testing.B) {
		b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", closedEndpoint(b))
		tel, err := telemetry.Setup(context.Background(), "toolwarden", "bench")
		if err != nil {
			b.Fatal(err)
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = tel.Shutdown(ctx)
		}()
		run(b, tel)
	})
}
