package web

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

func writeBytes(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// auditLog writes records as the host does (internal/audit).
func auditLog(t *testing.T, w io.Writer, records ...audit.Record) {
	t.Helper()
	l := audit.New(w)
	for _, r := range records {
		l.Write(r)
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
}

func check(at time.Time, server, tool string, v policy.Verdict, why string) audit.Record {
	return audit.Record{Time: at, Event: "check", Session: "s1", Decision: &policy.Decision{
		Decision: v, Server: server, App: server, Tool: tool,
		Reasons: []policy.Reason{{Source: "baseline", Code: "x", Message: why}},
	}}
}

func TestDecisionsAreReadFromTheAuditLog(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	f, _ := os.Create(file)
	now := time.Now().UTC().Truncate(time.Second)
	auditLog(t, f,
		check(now.Add(-time.Minute), "fs", "write_file", policy.Ask, "destructive"),
		audit.Record{Time: now.Add(-50 * time.Second), Event: "approve", Session: "s1", Decision: &session.ApprovalKey{App: "fs", Server: "fs", Tool: "write_file", Hash: strings.Repeat("a", 64)}, Scope: "always"},
		audit.Record{Time: now, Event: "observe", Session: "s1", Decision: map[string]string{"server": "fs", "tool": "write_file"}},
	)
	f.WriteString("{torn line\n\nnot json at all\n{\"time\":\"2026-01-01T00:00:00Z\",\"event\":\"check\",\"decision\":{}}\n")
	auditLog(t, f, check(now, "git", "push", policy.Deny, "pushes are denied"))
	f.Close()

	got := readTail(file)
	if got.Error != "" || got.Truncated {
		t.Fatalf("readTail: %+v", got)
	}
	want := []decision{
		{Time: now.Add(-time.Minute), Event: "check", Session: "s1", Server: "fs", Tool: "write_file", App: "fs", Decision: "ask", Reason: "destructive"},
		{Time: now.Add(-50 * time.Second), Event: "approve", Session: "s1", Server: "fs", Tool: "write_file", App: "fs", Decision: "approved always"},
		{Time: now, Event: "check", Session: "s1", Server: "git", Tool: "push", App: "git", Decision: "deny", Reason: "pushes are denied"},
	}
	if len(got.Decisions) != len(want) {
		t.Fatalf("decisions %+v", got.Decisions)
	}
	for i := range want {
		if g := got.Decisions[i]; !g.Time.Equal(want[i].Time) || g.Server != want[i].Server || g.Tool != want[i].Tool || g.Decision != want[i].Decision || g.Reason != want[i].Reason || g.Event != want[i].Event {
			t.Errorf("decision %d = %+v; want %+v", i, g, want[i])
		}
	}
	if got.Skipped != 3 {
		t.Errorf("skipped %d lines; want 3 (torn, not JSON, empty decision)", got.Skipped)
	}
}

func TestOnlyTheTailOfAHugeAuditLogIsRead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	f, _ := os.Create(file)
	now := time.Now().UTC()
	// One line longer than the tail, then records: the long line must be
	// dropped as cut, not parsed or counted.
	f.WriteString(`{"time":"` + now.Format(time.RFC3339) + `","event":"check","pad":"` + strings.Repeat("x", tailBytes) + "\"}\n")
	var recs []audit.Record
	for i := range maxRecords + 10 {
		recs = append(recs, check(now.Add(time.Duration(i)*time.Second), "fs", "read_file", policy.Allow, "read-only"))
	}
	auditLog(t, f, recs...)
	f.Close()
	got := readTail(file)
	if !got.Truncated || len(got.Decisions) != maxRecords || got.Skipped != 0 {
		t.Fatalf("truncated=%v decisions=%d skipped=%d", got.Truncated, len(got.Decisions), got.Skipped)
	}
	if last := got.Decisions[len(got.Decisions)-1]; !last.Time.Equal(recs[len(recs)-1].Time) {
		t.Errorf("the newest record is not last: %v", last.Time)
	}
}

func TestDecisionsWithoutALog(t *testing.T) {
	if got := readTail(""); len(got.Decisions) != 0 || got.Error != "" {
		t.Errorf("no log: %+v", got)
	}
	if got := readTail(filepath.Join(t.TempDir(), "missing.jsonl")); len(got.Decisions) != 0 || got.Error != "" {
		t.Errorf("missing log: %+v", got)
	}
	if got := readTail(t.TempDir()); got.Error == "" {
		t.Errorf("a directory for a log: %+v", got)
	}
}

func TestTheDecisionsEndpoint(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	f, _ := os.Create(file)
	auditLog(t, f, check(time.Now(), "fs", "write_file", policy.Deny, "no"))
	f.Close()
	s := newTestSite(t, Defaults().WithAudit(file))
	_, body, _ := s.do(t, req{path: "/api/decisions"})
	var got decisionTail
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.File != file || len(got.Decisions) != 1 || got.Decisions[0].Decision != "deny" {
		t.Errorf("decisions: %s", body)
	}
}
