package host_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/config"
)

type exportKey struct{}

type exported struct {
	mu     sync.Mutex
	events []string
	calls  []any
}

func (e *exported) ExportAuditContext(ctx context.Context, ev audit.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, ev.Name())
	e.calls = append(e.calls, ctx.Value(exportKey{}))
}

// serve exports audit records as OpenTelemetry logs even with no audit
// file (--audit off), each tied to the call that wrote it.
func TestAuditExportReceivesEveryRecordWithItsCallsContextWithoutAnAuditFile(t *testing.T) {
	t.Parallel()
	sink := &exported{}
	h, err := host.New(context.Background(), config.Default(), host.Defaults().WithAuditExport(sink))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if !h.Observes() {
		t.Error("a host that exports its audit records does not ask for observations: observe records would be lost")
	}
	ctx := context.WithValue(context.Background(), exportKey{}, "call-1")
	call := host.Call{Session: "s1", Server: "fs", Tool: tool(t, writeFile), Arguments: json.RawMessage(`{"path":"/tmp/x"}`)}
	d := h.Check(ctx, call)
	h.Observe(ctx, call, &d, host.Result{Text: "done"})
	h.Audit("s1", audit.Relay{Server: "fs", Method: "roots/list", Outcome: "answered"})
	want := []string{"check", "observe", "relay"}
	if len(sink.events) != 3 || sink.events[0] != want[0] || sink.events[1] != want[1] || sink.events[2] != want[2] {
		t.Fatalf("exported %v, want %v", sink.events, want)
	}
	if sink.calls[0] != "call-1" || sink.calls[1] != "call-1" {
		t.Errorf("check and observe exported with contexts %v, want the call's", sink.calls[:2])
	}
}
