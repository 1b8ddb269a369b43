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

func ask(at time.Time, session, server, tool string, a audit.Ask) audit.Record {
	a.Server, a.Tool, a.App = server, tool, server
	return audit.Record{Time: at, Event: a.Name(), Session: session, Decision: a}
}

// Each call is one row with how it ended, whatever records it left: its
// check, each channel's part, the approve of an allow, its observe.
func TestEachCallIsOneRowWithItsFinalOutcome(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	at := func(s int) time.Time { return now.Add(time.Duration(s) * time.Second) }
	key := &session.ApprovalKey{App: "fs", Server: "fs", Tool: "write_file", Hash: strings.Repeat("a", 64)}
	cases := []struct {
		name    string
		records []audit.Record
		outcome string
		label   string
	}{
		{"allowed by policy", []audit.Record{check(at(0), "fs", "read_file", policy.Allow, "read-only")}, "allowed", "allowed"},
		{"denied by policy", []audit.Record{check(at(0), "fs", "write_file", policy.Deny, "no")}, "denied", "denied by policy"},
		{"allowed once in the inbox", []audit.Record{
			check(at(0), "fs", "write_file", policy.Ask, "destructive"),
			ask(at(1), "s1", "fs", "write_file", audit.Ask{Ask: "a1", Channel: "inbox", Outcome: "posted"}),
			ask(at(2), "s1", "fs", "write_file", audit.Ask{Ask: "a1", Channel: "inbox", Outcome: "answered", Option: "allow_once", By: "inbox"}),
			{Time: at(3), Event: "observe", Session: "s1", Decision: map[string]string{"server": "fs", "tool": "write_file"}},
		}, "allowed_by_user", "allowed once by the user"},
		{"denied in the inbox", []audit.Record{
			check(at(0), "fs", "write_file", policy.Ask, "destructive"),
			ask(at(1), "s1", "fs", "write_file", audit.Ask{Ask: "a1", Channel: "inbox", Outcome: "posted"}),
			ask(at(2), "s1", "fs", "write_file", audit.Ask{Ask: "a1", Channel: "inbox", Outcome: "answered", Option: "deny", By: "inbox"}),
		}, "denied_by_user", "denied by the user"},
		{"always, answered by elicitation", []audit.Record{
			check(at(0), "fs", "write_file", policy.Ask, "destructive"),
			ask(at(1), "s1", "fs", "write_file", audit.Ask{Channel: "elicitation", Outcome: "answered", Option: "always"}),
			{Time: at(2), Event: "approve", Session: "s1", Decision: key, Scope: "always"},
		}, "allowed_by_user", "allowed always by the user"},
		{"expired", []audit.Record{
			check(at(0), "fs", "write_file", policy.Ask, "destructive"),
			ask(at(1), "s1", "fs", "write_file", audit.Ask{Ask: "a1", Channel: "inbox", Outcome: "posted"}),
			ask(at(9), "s1", "fs", "write_file", audit.Ask{Ask: "a1", Channel: "inbox", Outcome: "expired", Error: "timeout"}),
		}, "expired", "expired: no answer in time"},
		{"asked in the agent's own dialog, then run", []audit.Record{
			check(at(0), "fs", "write_file", policy.Ask, "destructive"),
			{Time: at(5), Event: "observe", Session: "s1", Decision: map[string]string{"server": "fs", "tool": "write_file"}},
		}, "allowed_by_user", "allowed by the user"},
		{"asked, nothing else yet", []audit.Record{check(at(0), "fs", "write_file", policy.Ask, "destructive")}, "asked", "asked: no answer recorded"},
		{"refused: approval_channel none", []audit.Record{
			check(at(0), "fs", "write_file", policy.Ask, "destructive"),
			ask(at(0), "s1", "fs", "write_file", audit.Ask{Channel: "none", Outcome: "refused"}),
		}, "refused", `denied: no approval channel (approval_channel = "none")`},
		{"denied: a hook that cannot ask", []audit.Record{
			check(at(0), "gemini", "run_shell_command", policy.Ask, "destructive"),
			ask(at(0), "s1", "gemini", "run_shell_command", audit.Ask{Channel: audit.ChannelAgent, Outcome: "refused"}),
		}, "cannot_ask", `denied: this agent cannot ask (approval_channel = "inbox" asks in the inbox)`},
		{"revoked from the page", []audit.Record{
			{Time: at(0), Event: "revoke", Decision: audit.Revoke{Server: "fs", Tool: "write_file", App: "fs", File: "/a.json", By: "inbox"}},
		}, "revoked", "always approval revoked"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "audit.jsonl")
			f, _ := os.Create(file)
			auditLog(t, f, tc.records...)
			f.Close()
			got := readTail(file)
			if len(got.Decisions) != 1 || got.Skipped != 0 {
				t.Fatalf("%d rows, %d skipped; want one row: %+v", len(got.Decisions), got.Skipped, got.Decisions)
			}
			if d := got.Decisions[0]; d.Outcome != tc.outcome || d.Label != tc.label || !d.Time.Equal(at(0)) {
				t.Errorf("row %+v; want outcome %q, %q, at the call's time", d, tc.outcome, tc.label)
			}
		})
	}
}

// Two asks of one tool in one session, the first expiring while the
// second is answered: each record goes to its own call.
func TestTheRecordsOfTwoAsksGoToTheirOwnCalls(t *testing.T) {
	now := time.Now().UTC()
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	f, _ := os.Create(file)
	auditLog(t, f,
		check(now, "fs", "write_file", policy.Ask, "d"),
		ask(now, "s1", "fs", "write_file", audit.Ask{Ask: "a1", Channel: "inbox", Outcome: "posted"}),
		check(now.Add(time.Second), "fs", "write_file", policy.Ask, "d"),
		ask(now, "s1", "fs", "write_file", audit.Ask{Ask: "a2", Channel: "inbox", Outcome: "posted"}),
		check(now.Add(2*time.Second), "git", "push", policy.Deny, "no"),
		ask(now, "s1", "fs", "write_file", audit.Ask{Ask: "a1", Channel: "inbox", Outcome: "expired"}),
		ask(now, "s1", "fs", "write_file", audit.Ask{Ask: "a2", Channel: "inbox", Outcome: "answered", Option: "allow_session", By: "inbox"}),
	)
	f.Close()
	var got []string
	for _, d := range readTail(file).Decisions {
		got = append(got, d.Server+"/"+d.Tool+": "+d.Label)
	}
	want := []string{"fs/write_file: expired: no answer in time", "fs/write_file: allowed for the session by the user", "git/push: denied by policy"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("rows %q; want %q", got, want)
	}
}

// Lines that are not records (torn, hand-edited) are counted and read
// past; the rows around them stay, and the file is left as it was.
func TestUnreadableLinesAreCountedAndReadPast(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	f, _ := os.Create(file)
	now := time.Now().UTC()
	auditLog(t, f, check(now, "fs", "write_file", policy.Deny, "no"))
	f.WriteString("{torn line\n\nnot json at all\n{\"time\":\"2026-01-01T00:00:00Z\",\"event\":\"check\",\"decision\":{}}\n")
	auditLog(t, f, check(now, "git", "push", policy.Allow, "ok"))
	f.WriteString(`{"time":"2026-01-01T00:00:00Z","event":"ch`) // cut mid-record
	f.Close()
	before, _ := os.ReadFile(file)
	got := readTail(file)
	if got.Error != "" || len(got.Decisions) != 2 || got.Skipped != 4 {
		t.Fatalf("rows %+v, skipped %d, error %q; want 2 rows and 4 lines skipped (torn, not JSON, empty check, cut)", got.Decisions, got.Skipped, got.Error)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Error("reading the log changed it")
	}
}

// Just after a rotation the log is short; the rows of the file rotated
// last are shown too, the older first.
func TestTheFileRotatedLastIsReadWhenTheLogIsShort(t *testing.T) {
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	now := time.Now().UTC()
	old, _ := os.Create(audit.Rotated(file, 1))
	auditLog(t, old, check(now, "fs", "read_file", policy.Allow, "r"))
	old.Close()
	cur, _ := os.Create(file)
	auditLog(t, cur, check(now.Add(time.Second), "fs", "write_file", policy.Deny, "w"))
	cur.Close()
	got := readTail(file)
	if len(got.Decisions) != 2 || got.Decisions[0].Tool != "read_file" || got.Decisions[1].Tool != "write_file" {
		t.Errorf("rows %+v; want read_file (rotated) then write_file", got.Decisions)
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
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.File != file || len(got.Decisions) != 1 || got.Decisions[0].Decision != "deny" || got.Decisions[0].Label != "denied by policy" {
		t.Errorf("decisions: %s", body)
	}
}
