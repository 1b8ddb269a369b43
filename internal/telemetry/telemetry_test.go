package telemetry

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolwarden/toolwarden/internal/audit"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestEveryMethodIsSafeOnNilTelemetryAndNilSpan(t *testing.T) {
	var tel *Telemetry
	ctx := context.Background()
	ctx2, span := tel.StartServer(ctx, Request{Method: "tools/call", Target: "x"})
	if span != nil || ctx2 != ctx {
		t.Fatalf("nil telemetry started a span: %v", span)
	}
	_, cspan := tel.StartClient(ctx, "fs", Request{Method: "tools/call"})
	span.Decision("deny", []string{"rule"}, "sha256:x")
	span.SetResourceURI("file:///x")
	span.End("tool_error")
	cspan.End("")
	tel.ExportAudit(audit.Ask{Server: "fs"})
	tel.ExportAuditContext(ctx, audit.Record{Event: "check"})
	if tel.Enabled() {
		t.Fatal("nil telemetry says it is enabled")
	}
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestSetupWithNothingConfiguredIsOff(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"no variables":                        {},
		"sdk disabled beats an endpoint":      {"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"},
		"every signal none beats an endpoint": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_LOGS_EXPORTER": "none"},
		"a protocol with no endpoint":         {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
	} {
		t.Run(name, func(t *testing.T) {
			tel, err := setup(context.Background(), "toolwarden", "test", env(vars))
			if err != nil {
				t.Fatal(err)
			}
			if tel.Enabled() {
				t.Fatal("telemetry is on with no exporter configured")
			}
			if _, span := tel.StartServer(context.Background(), Request{Method: "tools/call"}); span != nil {
				t.Fatal("an off telemetry started a span")
			}
		})
	}
}

func TestSetupRefusesAnExporterOrProtocolItCannotHonour(t *testing.T) {
	for name, c := range map[string]struct {
		vars map[string]string
		want string
	}{
		"console exporter":          {map[string]string{"OTEL_TRACES_EXPORTER": "console"}, `OTEL_TRACES_EXPORTER="console"`},
		"prometheus in a list":      {map[string]string{"OTEL_METRICS_EXPORTER": "otlp,prometheus"}, `OTEL_METRICS_EXPORTER="prometheus"`},
		"http/json":                 {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, `OTEL_EXPORTER_OTLP_PROTOCOL="http/json"`},
		"per-signal typo":           {map[string]string{"OTEL_LOGS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "grcp"}, `OTEL_EXPORTER_OTLP_LOGS_PROTOCOL="grcp"`},
		"endpoint without a scheme": {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "otel-collector:4317"}, `OTEL_EXPORTER_OTLP_ENDPOINT="otel-collector:4317" is not a URL`},
		"signal endpoint not a URL": {map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http//collector/v1/traces"}, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http//collector/v1/traces"`},
	} {
		t.Run(name, func(t *testing.T) {
			tel, err := setup(context.Background(), "toolwarden", "test", env(c.vars))
			if err == nil {
				_ = tel.Shutdown(context.Background())
				t.Fatal("setup accepted a configuration it cannot honour")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not name %s", err, c.want)
			}
		})
	}
}

func TestSpanNameFollowsTheMCPConventions(t *testing.T) {
	for _, c := range []struct {
		r    Request
		want string
	}{
		{Request{Method: "tools/call", Target: "read_file"}, "tools/call read_file"},
		{Request{Method: "prompts/get", Target: "review"}, "prompts/get review"},
		{Request{Method: "resources/read", Target: "file:///etc/passwd"}, "resources/read"},
		{Request{Method: "tools/list"}, "tools/list"},
		{Request{Method: "tools/call"}, "tools/call"},
	} {
		if got := spanName(c.r); got != c.want {
			t.Errorf("spanName(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}

func TestRequestIDIsTheConventionsStringForm(t *testing.T) {
	for raw, want := range map[string]string{`7`: "7", `"req-7"`: "req-7", ` 12 `: "12"} {
		if got, ok := requestID(json.RawMessage(raw)); !ok || got != want {
			t.Errorf("requestID(%s) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{``, `null`, `"unterminated`} {
		if got, ok := requestID(json.RawMessage(raw)); ok {
			t.Errorf("requestID(%q) = %q, want none", raw, got)
		}
	}
}

// remote is the span context a client's traceparent carries.
func remote(t *testing.T, traceparent string) trace.SpanContext {
	t.Helper()
	ctx, ok := extractMeta(context.Background(), json.RawMessage(`{"traceparent":"`+traceparent+`"}`))
	if !ok {
		t.Fatalf("traceparent %q was not extracted", traceparent)
	}
	return trace.SpanContextFromContext(ctx)
}

func TestExtractMetaIgnoresWhatIsNotATraceContext(t *testing.T) {
	for _, meta := range []string{``, `null`, `[]`, `{"traceparent":7}`, `{"traceparent":"garbage"}`, `{"traceparent":"00-00000000000000000000000000000000-0000000000000000-01"}`, `{"trace`} {
		if _, ok := extractMeta(context.Background(), json.RawMessage(meta)); ok {
			t.Errorf("extractMeta(%q) found a parent", meta)
		}
	}
}

func TestMetaMembersCarryTheSpanContextAndNothingWithoutOne(t *testing.T) {
	if m := MetaMembers(context.Background()); m != nil {
		t.Fatalf("no span, yet members %v", m)
	}
	ctx, _ := extractMeta(context.Background(), json.RawMessage(`{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=1"}`))
	m := MetaMembers(ctx)
	if m["traceparent"] != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" || m["tracestate"] != "a=1" || len(m) != 2 {
		t.Fatalf("members = %v", m)
	}
}

// MetaMembers hands a peer the span context of ctx, and nothing without one.
func TestMetaMembersCarryTheSpanContextOfCtxAndNothingWithoutOne(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := trace.ContextWithSpanContext(context.Background(), remote(t, tp))
	if got := MetaMembers(ctx); got["traceparent"] != tp {
		t.Fatalf("MetaMembers = %v, want traceparent %s", got, tp)
	}
	if got := MetaMembers(context.Background()); got != nil {
		t.Fatalf("MetaMembers without a span = %v, want nil", got)
	}
}
