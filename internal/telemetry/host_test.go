package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/telemetry"
	"github.com/toolwarden/toolwarden/internal/telemetry/otlptest"
)

const destructiveTool = `{"name":"write_file","description":"Write a file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`

// The engine's own records (check, observe) reach the collector as log
// records inside the call's trace, with the very line the audit file holds.
func TestTheHostsAuditRecordsReachTheCollectorInTheCallsTrace(t *testing.T) {
	col := otlptest.Start(t)
	pointAt(t, col, "http/protobuf")
	tel, err := telemetry.Setup(context.Background(), "toolwarden", "v-test")
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	h, err := host.New(context.Background(), config.Default(), host.Defaults().WithAuditLog(&file).WithAuditExport(tel))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	tl, err := host.ParseTool([]byte(destructiveTool))
	if err != nil {
		t.Fatal(err)
	}

	ctx, span := tel.StartServer(context.Background(), telemetry.Request{Method: "tools/call", Target: "fs__write_file", Meta: json.RawMessage(`{"traceparent":"` + clientParent + `"}`)})
	call := host.Call{Session: "s1", Server: "fs", Tool: tl, Arguments: json.RawMessage(`{"path":"` + secretArg + `"}`)}
	d := h.Check(ctx, call)
	span.Decision(d.Decision.String(), nil, "")
	h.Observe(ctx, call, &d, host.Result{Text: "ok"})
	span.End("")
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	spans := col.WaitSpans(t, func(s []otlptest.Span) bool { return len(s) == 1 })
	logs := col.WaitLogs(t, func(l []otlptest.Log) bool { return len(l) >= 2 })
	lines := strings.Split(strings.TrimSpace(file.String()), "\n")
	if len(lines) != 2 || len(logs) != 2 {
		t.Fatalf("audit file has %d lines, collector %d log records; want check and observe in both", len(lines), len(logs))
	}
	for i, l := range logs {
		if l.TraceID != clientTraceID || l.SpanID != spans[0].SpanID {
			t.Errorf("log %v is in trace %s span %s; want the call's server span %s %s", l.Attributes, l.TraceID, l.SpanID, clientTraceID, spans[0].SpanID)
		}
		if !sameJSON(t, fmt.Sprint(l.Body), lines[i]) {
			t.Errorf("log body\n %s\nis not the audit line\n %s", l.Body, lines[i])
		}
	}
	if spans[0].Attributes["toolwarden.decision"] != "ask" {
		t.Errorf("a destructive write's span says %v, want ask", spans[0].Attributes["toolwarden.decision"])
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
