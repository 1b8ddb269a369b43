package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/telemetry/otlptest"
)

// The trace an agent starts goes through the gateway and on to the
// upstream: serve's SERVER span is the child of the client's traceparent
// (params._meta), its CLIENT span the child of that, and the upstream is
// handed the CLIENT span as its parent in its own _meta, over stdio and
// HTTP, in both protocol eras. The collector is the real one; every span,
// the duration metric and the audit records as logs arrive there.
func TestServeCarriesAClientsTraceThroughToItsUpstreamsAndIntoACollector(t *testing.T) {
	t.Parallel()
	col := otlptest.Start(t)
	cfg := writeFile(t, "serve.toml", fmt.Sprintf(`
[mcp_servers.ts]
command = %q

[mcp_servers.tsh]
url = %q

[policies.no-secrets]
builtin = "argguard"
apps = ["ts"]
[policies.no-secrets.config]
rules = [{ tool = "*", arg = "message", deny_glob = "**/secret*" }]
`, testServer, startHTTPTestServer(t)))
	s := coreStartServe(t, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.HTTPEndpoint, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_SERVICE_NAME=gateway-e2e", "OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_BLRP_SCHEDULE_DELAY=50", "OTEL_METRIC_EXPORT_INTERVAL=200",
		"OTEL_TRACES_EXPORTER=", "OTEL_METRICS_EXPORTER=", "OTEL_LOGS_EXPORTER=", "OTEL_SDK_DISABLED=",
	}, "--config", cfg)

	type sent struct{ traceID, parent, server, era string }
	var calls []sent
	for i, era := range coreEras {
		c := coreClient(t, s.url, era.version, nil, nil)
		eventually(t, 30*time.Second, "serve to list both upstreams' meta tools", func() bool {
			res, err := c.ListTools(testContext(t), mcp.ListToolsRequest{})
			if err != nil {
				return false
			}
			n := 0
			for _, tl := range res.Tools {
				if tl.Name == "ts__meta" || tl.Name == "tsh__meta" {
					n++
				}
			}
			return n == 2
		})
		for j, server := range []string{"ts", "tsh"} {
			traceID := fmt.Sprintf("%032x", 0xabc000+i*16+j)
			parent := fmt.Sprintf("%016x", 0xdef000+i*16+j)
			req := mcp.CallToolRequest{}
			req.Params.Name = server + "__meta"
			req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-" + traceID + "-" + parent + "-01"}}
			res, err := c.CallTool(testContext(t), req)
			if err != nil || res.IsError {
				t.Fatalf("%s %s__meta: %v %+v\n%s", era.name, server, err, res, s.log.String())
			}
			var upstreamMeta map[string]any
			if err := json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &upstreamMeta); err != nil {
				t.Fatalf("%s: the upstream's report %v: %v", server, res.Content, err)
			}
			tp, _ := upstreamMeta["traceparent"].(string)
			if !strings.HasPrefix(tp, "00-"+traceID+"-") || strings.Contains(tp, parent) {
				t.Errorf("%s (%s) got traceparent %q; want the client's trace %s with serve's CLIENT span as parent", server, era.name, tp, traceID)
			}
			calls = append(calls, sent{traceID, parent, server, era.version})
			// What the upstream was told is its parent must be serve's CLIENT span.
			calls[len(calls)-1].parent = parent + "|" + strings.Split(tp+"--", "-")[2]
		}
	}

	// A denied call: the decision and why are on the span, the argument
	// that was denied is nowhere, and nothing went upstream.
	deny := mcp.CallToolRequest{}
	deny.Params.Name = "ts__echo"
	deny.Params.Arguments = map[string]any{"message": "/srv/secret-plans.txt"}
	deny.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{"traceparent": "00-" + strings.Repeat("d", 32) + "-" + strings.Repeat("e", 16) + "-01"}}
	if res, err := coreClient(t, s.url, mcp.ProtocolVersion20260728, nil, nil).CallTool(testContext(t), deny); err != nil || !res.IsError {
		t.Fatalf("a call argguard denies was answered: %v %+v", err, res)
	}

	spans := col.WaitSpans(t, func(sp []otlptest.Span) bool {
		n := 0
		for _, x := range sp {
			if strings.HasSuffix(x.Name, "meta") {
				n++
			}
		}
		return n >= 2*len(calls)
	})
	checkDeniedSpan(t, col)
	byID := map[string]otlptest.Span{}
	for _, x := range spans {
		byID[x.SpanID] = x
	}
	for _, c := range calls {
		clientParent, upstreamParent, _ := strings.Cut(c.parent, "|")
		cspan, ok := byID[upstreamParent]
		if !ok || cspan.Kind != otlptest.KindClient || cspan.Name != "tools/call meta" || cspan.Attributes["toolwarden.server"] != c.server {
			t.Errorf("%s (%s): the upstream's parent %s is not serve's CLIENT span for it: %+v", c.server, c.era, upstreamParent, cspan)
			continue
		}
		sspan := byID[cspan.ParentSpanID]
		if sspan.Kind != otlptest.KindServer || sspan.Name != "tools/call "+c.server+"__meta" || sspan.TraceID != c.traceID || sspan.ParentSpanID != clientParent {
			t.Errorf("%s (%s): SERVER span %q in trace %s under %s; want \"tools/call %s__meta\" under the client's %s %s", c.server, c.era, sspan.Name, sspan.TraceID, sspan.ParentSpanID, c.server, c.traceID, clientParent)
		}
		if sspan.Attributes["toolwarden.decision"] != "allow" || sspan.Attributes["mcp.protocol.version"] != c.era || sspan.Attributes["gen_ai.operation.name"] != "execute_tool" {
			t.Errorf("%s (%s): SERVER span attributes %v; want decision allow, the era's protocol version, execute_tool", c.server, c.era, sspan.Attributes)
		}
		if _, has := sspan.Attributes["mcp.session.id"]; has != (c.era != mcp.ProtocolVersion20260728) {
			t.Errorf("%s (%s): mcp.session.id present=%v; want it exactly for the session era", c.server, c.era, has)
		}
		if sspan.Resource["service.name"] != "gateway-e2e" {
			t.Errorf("service.name = %v, want OTEL_SERVICE_NAME", sspan.Resource["service.name"])
		}
	}

	col.WaitHistograms(t, func(p []otlptest.HistogramPoint) bool {
		for _, x := range p {
			if x.Metric == "mcp.server.operation.duration" && x.Attributes["gen_ai.tool.name"] == "tsh__meta" && x.Unit == "s" {
				return true
			}
		}
		return false
	})
	col.WaitLogs(t, func(l []otlptest.Log) bool {
		for _, x := range l {
			if x.Attributes["toolwarden.audit.event"] == "check" && x.TraceID == calls[0].traceID && strings.Contains(fmt.Sprint(x.Body), `"event":"check"`) {
				return true
			}
		}
		return false
	})
}

func checkDeniedSpan(t *testing.T, col *otlptest.Collector) {
	t.Helper()
	spans := col.WaitSpans(t, func(sp []otlptest.Span) bool {
		for _, x := range sp {
			if x.Name == "tools/call ts__echo" {
				return true
			}
		}
		return false
	})
	for _, x := range spans {
		if strings.Contains(fmt.Sprintf("%v", x), "secret-plans") {
			t.Errorf("span %q carries the denied argument: %+v", x.Name, x)
		}
		if x.TraceID == strings.Repeat("d", 32) && x.Kind == otlptest.KindClient {
			t.Errorf("a denied call has a CLIENT span: it went upstream: %+v", x)
		}
		if x.Name != "tools/call ts__echo" {
			continue
		}
		codes, _ := x.Attributes["toolwarden.reason_codes"].([]any)
		if x.Attributes["toolwarden.decision"] != "deny" || x.Attributes["error.type"] != "denied" || x.StatusCode != 2 || len(codes) == 0 || x.TraceID != strings.Repeat("d", 32) {
			t.Errorf("denied call's span: %+v; want decision deny with reason codes, error.type denied, status error, in the client's trace", x)
		}
	}
}

// A telemetry setting serve cannot honour stops it at start, naming the
// variable, instead of serving with every span silently dropped.
func TestServeRefusesToStartWithTelemetrySettingsItCannotHonour(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "serve.toml", fmt.Sprintf("[mcp_servers.ts]\ncommand = %q\n", testServer))
	for _, c := range []struct{ env, want string }{
		{"OTEL_EXPORTER_OTLP_ENDPOINT=otel-collector:4317", `OTEL_EXPORTER_OTLP_ENDPOINT="otel-collector:4317" is not a URL`},
		{"OTEL_TRACES_EXPORTER=console", `OTEL_TRACES_EXPORTER="console"`},
	} {
		cmd := exec.Command(twBin, "serve", "--listen", "127.0.0.1:0", "--audit", "off", "--config", cfg)
		cmd.Env = append(os.Environ(), c.env)
		done := make(chan struct{})
		timer := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill(); close(done) })
		out, err := cmd.CombinedOutput()
		timer.Stop()
		select {
		case <-done:
			t.Fatalf("%s: serve kept running:\n%s", c.env, out)
		default:
		}
		if err == nil || !strings.Contains(string(out), c.want) || strings.Contains(string(out), "listening on") {
			t.Errorf("%s: serve exited with %v and said:\n%s\nwant a refusal naming %s before listening", c.env, err, out, c.want)
		}
	}
}
