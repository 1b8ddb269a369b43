package audit_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/internal/audit"
)

type ctxKey struct{}

// collect is a Sink that keeps what it is handed.
type collect struct {
	mu   sync.Mutex
	got  []audit.Event
	ctxs []any
}

func (c *collect) ExportAuditContext(ctx context.Context, e audit.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, e)
	c.ctxs = append(c.ctxs, ctx.Value(ctxKey{}))
}

func TestATeeWritesTheLineAndHandsTheSinkTheSameRecordWithItsContext(t *testing.T) {
	t.Parallel()
	var file bytes.Buffer
	sink := &collect{}
	l := audit.NewTee(&file, sink)
	ctx := context.WithValue(context.Background(), ctxKey{}, "call-7")
	l.WriteContext(ctx, audit.Record{Event: "check", Session: "s1"})
	l.Write(audit.Record{Event: "approve", Session: "s1"})
	if n := strings.Count(file.String(), "\n"); n != 2 {
		t.Fatalf("file has %d lines, want 2: %s", n, file.String())
	}
	if len(sink.got) != 2 || sink.got[0].Name() != "check" || sink.got[1].Name() != "approve" {
		t.Fatalf("sink got %+v, want check then approve", sink.got)
	}
	if sink.ctxs[0] != "call-7" || sink.ctxs[1] != nil {
		t.Errorf("sink contexts = %v, want the call's for the check and none for the plain Write", sink.ctxs)
	}
}

func TestATeeWithNoFileOnlyExports(t *testing.T) {
	t.Parallel()
	sink := &collect{}
	l := audit.NewTee(nil, sink)
	l.WriteEvent("s1", audit.Relay{Server: "docs", Method: "roots/list", Outcome: "answered"})
	if len(sink.got) != 1 || sink.got[0].Name() != "relay" {
		t.Fatalf("sink got %+v, want the relay record", sink.got)
	}
	if rec, ok := sink.got[0].(audit.Record); !ok || rec.Session != "s1" {
		t.Errorf("sink got %#v, want the whole record (time, session, event)", sink.got[0])
	}
	if l.Err() != nil {
		t.Errorf("a log with no file has an error: %v", l.Err())
	}
}
