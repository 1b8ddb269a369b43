package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/telemetry"
	"github.com/toolwarden/toolwarden/internal/telemetry/otlptest"
)

// clientTrace is the trace context an MCP client sends in params._meta.
const (
	clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID  = "00f067aa0ba902b7"
	clientParent  = "00-" + clientTraceID + "-" + clientSpanID + "-01"
	// secretArg is an argument value that must never reach the collector.
	secretArg = "/home/alice/.ssh/id_ed25519"
)

// pointAt sets the OTEL_* variables that send every signal to col over
// protocol, and clears the ones that would change what the test expects.
func pointAt(t *testing.T, col *otlptest.Collector, protocol string) {
	endpoint := col.HTTPEndpoint
	if protocol == "grpc" {
		endpoint = col.GRPCEndpoint
	}
	for k, v := range map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
		"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=ci,team=platform",
		"OTEL_SERVICE_NAME":        "", "OTEL_SDK_DISABLED": "", "OTEL_TRACES_SAMPLER": "",
		"OTEL_TRACES_EXPORTER": "", "OTEL_METRICS_EXPORTER": "", "OTEL_LOGS_EXPORTER": "",
	} {
		t.Setenv(k, v)
	}
}

// call is what serve does for one tools/call: the SERVER span from the
// client's traceparent, the decision, the CLIENT span to the upstream with
// the trace context injected into the upstream's params, two audit records.
type call struct {
	ambient      trace.SpanContext
	upstreamMeta map[string]string // what serve puts in the upstream call's _meta
}

func serveOneCall(t *testing.T, tel *telemetry.Telemetry) call {
	t.Helper()
	ambient := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0xaa, 1}, SpanID: trace.SpanID{0xbb, 2}, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithSpanContext(context.Background(), ambient) // an HTTP server span, say
	ctx, span := tel.StartServer(ctx, telemetry.Request{
		Method: "tools/call", Target: "fs__read_file", ProtocolVersion: "2025-06-18", SessionID: "sess-1",
		RequestID: json.RawMessage(`7`),
		Meta:      json.RawMessage(`{"traceparent":"` + clientParent + `","tracestate":"vendor=x","progressToken":3}`),
	})
	span.Decision("ask", []string{"annotation.destructive", "rule.ask"}, "sha256:c0ffee")
	tel.ExportAuditContext(ctx, audit.Record{Time: time.Now().UTC(), Event: "check", Session: "sess-1", Decision: map[string]string{"decision": "ask"}})

	cctx, up := tel.StartClient(ctx, "fs", telemetry.Request{Method: "tools/call", Target: "read_file", ProtocolVersion: "2025-11-25", RequestID: json.RawMessage(`"up-1"`)})
	meta := telemetry.MetaMembers(cctx)
	up.End("tool_error")
	tel.ExportAudit(audit.Ask{Server: "fs", Tool: "read_file", Channel: "elicitation", Outcome: "answered", Option: "allow_once"})
	span.End("")
	return call{ambient: ambient, upstreamMeta: meta}
}

func TestOneCallReachesARealCollectorAsSpansMetricsAndLogs(t *testing.T) {
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(strings.ReplaceAll(protocol, "/", "-"), func(t *testing.T) {
			col := otlptest.Start(t)
			pointAt(t, col, protocol)
			tel, err := telemetry.Setup(context.Background(), "toolwarden", "v-test")
			if err != nil {
				t.Fatal(err)
			}
			if !tel.Enabled() {
				t.Fatal("telemetry is off with OTEL_EXPORTER_OTLP_ENDPOINT set")
			}
			c := serveOneCall(t, tel)
			if err := tel.Shutdown(context.Background()); err != nil {
				t.Fatalf("shutdown (flush to the collector): %v\n%s", err, col.Stderr())
			}
			server, client := checkSpans(t, col, c)
			checkUpstreamTraceparent(t, c, client)
			checkHistograms(t, col)
			checkLogs(t, col, server)
		})
	}
}

func findSpan(spans []otlptest.Span, kind int) (otlptest.Span, bool) {
	for _, s := range spans {
		if s.Kind == kind {
			return s, true
		}
	}
	return otlptest.Span{}, false
}

func checkSpans(t *testing.T, col *otlptest.Collector, c call) (server, client otlptest.Span) {
	t.Helper()
	spans := col.WaitSpans(t, func(s []otlptest.Span) bool { return len(s) >= 2 })
	server, _ = findSpan(spans, otlptest.KindServer)
	client, _ = findSpan(spans, otlptest.KindClient)
	if server.Name != "tools/call fs__read_file" {
		t.Errorf("server span name = %q, want \"tools/call fs__read_file\"", server.Name)
	}
	if server.TraceID != clientTraceID || server.ParentSpanID != clientSpanID {
		t.Errorf("server span is in trace %s under %s; want the client's traceparent (%s under %s)", server.TraceID, server.ParentSpanID, clientTraceID, clientSpanID)
	}
	if len(server.Links) != 1 || server.Links[0].SpanID != c.ambient.SpanID().String() {
		t.Errorf("server span links = %+v, want the ambient span %s linked, not parented", server.Links, c.ambient.SpanID())
	}
	wantServer := map[string]any{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "fs__read_file", "gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version": "2025-06-18", "jsonrpc.request.id": "7", "mcp.session.id": "sess-1",
		"toolwarden.decision": "ask", "toolwarden.reason_codes": []any{"annotation.destructive", "rule.ask"},
		"toolwarden.policy_digest": "sha256:c0ffee",
	}
	if !reflect.DeepEqual(server.Attributes, wantServer) {
		t.Errorf("server span attributes:\n got %v\nwant %v", server.Attributes, wantServer)
	}
	wantEvent := []otlptest.Event{{Name: "gen_ai.guardrail.result", Attributes: map[string]any{
		"gen_ai.guardrail.component.name": "toolwarden", "gen_ai.guardrail.source": "tool_input",
		"gen_ai.guardrail.result.type": "decision", "gen_ai.guardrail.result.value": "ask", "gen_ai.guardrail.policy.id": "sha256:c0ffee",
	}}}
	if !reflect.DeepEqual(server.Events, wantEvent) {
		t.Errorf("server span events:\n got %v\nwant %v", server.Events, wantEvent)
	}
	if server.StatusCode != 0 {
		t.Errorf("a successful call's span has status %d, want unset", server.StatusCode)
	}
	if client.Name != "tools/call read_file" || client.TraceID != clientTraceID || client.ParentSpanID != server.SpanID {
		t.Errorf("client span %q in %s under %s; want \"tools/call read_file\" under the server span %s", client.Name, client.TraceID, client.ParentSpanID, server.SpanID)
	}
	wantClient := map[string]any{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "read_file", "gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version": "2025-11-25", "jsonrpc.request.id": "up-1", "toolwarden.server": "fs", "error.type": "tool_error",
	}
	if !reflect.DeepEqual(client.Attributes, wantClient) {
		t.Errorf("client span attributes:\n got %v\nwant %v", client.Attributes, wantClient)
	}
	if client.StatusCode != 2 {
		t.Errorf("a tool_error client span has status %d, want 2 (error)", client.StatusCode)
	}
	for _, s := range spans {
		if s.Resource["service.name"] != "toolwarden" || s.Resource["service.version"] != "v-test" || s.Resource["deployment.environment.name"] != "ci" || s.Resource["team"] != "platform" {
			t.Errorf("span %q resource = %v, want service toolwarden v-test and OTEL_RESOURCE_ATTRIBUTES", s.Name, s.Resource)
		}
		if strings.Contains(fmt.Sprint(s), secretArg) {
			t.Errorf("span %q carries an argument value: %+v", s.Name, s)
		}
	}
	return server, client
}

// checkUpstreamTraceparent: the upstream is told the CLIENT span is its
// parent, so its own SERVER span joins the same trace.
func checkUpstreamTraceparent(t *testing.T, c call, client otlptest.Span) {
	t.Helper()
	want := "00-" + client.TraceID + "-" + client.SpanID + "-01"
	if c.upstreamMeta["traceparent"] != want {
		t.Errorf("upstream _meta.traceparent = %q, want %s (the client span)", c.upstreamMeta["traceparent"], want)
	}
	if c.upstreamMeta["tracestate"] != "vendor=x" {
		t.Errorf("upstream _meta lost the client's tracestate: %v", c.upstreamMeta)
	}
}

func checkHistograms(t *testing.T, col *otlptest.Collector) {
	t.Helper()
	points := col.WaitHistograms(t, func(p []otlptest.HistogramPoint) bool {
		var server, client bool
		for _, pt := range p {
			server = server || pt.Metric == "mcp.server.operation.duration"
			client = client || pt.Metric == "mcp.client.operation.duration"
		}
		return server && client
	})
	want := map[string]map[string]any{
		"mcp.server.operation.duration": {"mcp.method.name": "tools/call", "gen_ai.tool.name": "fs__read_file", "gen_ai.operation.name": "execute_tool", "mcp.protocol.version": "2025-06-18"},
		"mcp.client.operation.duration": {"mcp.method.name": "tools/call", "gen_ai.tool.name": "read_file", "gen_ai.operation.name": "execute_tool", "mcp.protocol.version": "2025-11-25", "toolwarden.server": "fs", "error.type": "tool_error"},
	}
	bounds := []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}
	for _, p := range points {
		w, ok := want[p.Metric]
		if !ok {
			continue
		}
		if p.Unit != "s" || p.Count != 1 || p.Sum <= 0 || p.Sum > 10 {
			t.Errorf("%s: unit %q count %d sum %v; want seconds, one call, a positive duration", p.Metric, p.Unit, p.Count, p.Sum)
		}
		if !reflect.DeepEqual(p.Attributes, w) {
			t.Errorf("%s attributes:\n got %v\nwant %v (no ids: they would make a series per call)", p.Metric, p.Attributes, w)
		}
		if !reflect.DeepEqual(p.Bounds, bounds) {
			t.Errorf("%s bucket bounds = %v, want the conventions' %v", p.Metric, p.Bounds, bounds)
		}
	}
}

func checkLogs(t *testing.T, col *otlptest.Collector, server otlptest.Span) {
	t.Helper()
	logs := col.WaitLogs(t, func(l []otlptest.Log) bool { return len(l) >= 2 })
	byEvent := map[string]otlptest.Log{}
	for _, l := range logs {
		byEvent[fmt.Sprint(l.Attributes["toolwarden.audit.event"])] = l
	}
	check := byEvent["check"]
	var body map[string]any
	if err := json.Unmarshal([]byte(fmt.Sprint(check.Body)), &body); err != nil || body["event"] != "check" || body["session"] != "sess-1" {
		t.Errorf("check log body = %v (%v), want the audit line's JSON", check.Body, err)
	}
	if check.TraceID != server.TraceID || check.SpanID != server.SpanID {
		t.Errorf("check log in trace %s span %s, want the server span (%s %s)", check.TraceID, check.SpanID, server.TraceID, server.SpanID)
	}
	if check.EventName != "toolwarden.audit.check" || check.SeverityText != "INFO" || check.Attributes["toolwarden.session"] != "sess-1" {
		t.Errorf("check log = %+v, want event toolwarden.audit.check, INFO, the session", check)
	}
	ask := byEvent["channel"]
	if err := json.Unmarshal([]byte(fmt.Sprint(ask.Body)), &body); err != nil || body["event"] != "channel" || !strings.Contains(fmt.Sprint(body["decision"]), "allow_once") {
		t.Errorf("channel log body = %v (%v), want the Ask event as the audit log writes it", ask.Body, err)
	}
	if ask.TraceID != "" {
		t.Errorf("an audit event exported with no span has trace %s", ask.TraceID)
	}
}
