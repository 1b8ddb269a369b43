package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/interleave"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// revokeAll revokes every grant through its own handle on the file, as
// `toolwarden approvals revoke` does from another process.
func revokeAll(t testing.TB, file string) {
	t.Helper()
	p, err := session.OpenPersistent(file)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.Revoke(func(session.Grant) bool { return true }); err != nil || n == 0 {
		t.Fatalf("revoke: %d %v", n, err)
	}
}

// The process that granted "always" honours a revoke made elsewhere on
// its very next check: the grant did not also stay in the session.
func TestRevokingAnAlwaysApprovalTakesEffectInTheGrantingProcess(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "approvals.json")
	h := testhost.New(t, "", host.Defaults().WithApprovalsFile(file))
	ctx := context.Background()
	call := host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile)}
	d := h.Check(ctx, call)
	if err := h.Approve("s", &d, host.Always); err != nil {
		t.Fatal(err)
	}
	if d2 := h.Check(ctx, call); d2.Decision != host.Allow {
		t.Fatalf("after always: %s", d2.Decision)
	}
	if got := h.Session("s").Approvals(); len(got) != 0 {
		t.Fatalf("the session also holds the always approval (it would outlive a revoke, and hook mode would save it): %+v", got)
	}
	revokeAll(t, file)
	if d3 := h.Check(ctx, call); d3.Decision != host.Ask {
		t.Fatalf("after a revoke in another process: %s (%+v)", d3.Decision, d3.Reasons)
	}
}

// A session approval is a separate answer: revoking an "always" approval
// for the same key leaves it in place for the rest of that session only.
func TestASessionApprovalOutlivesTheRevokeOfAnAlwaysApproval(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "approvals.json")
	h := testhost.New(t, "", host.Defaults().WithApprovalsFile(file))
	ctx := context.Background()
	call := host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile)}
	d := h.Check(ctx, call)
	if err := h.Approve("s", &d, host.ForSession); err != nil {
		t.Fatal(err)
	}
	other := host.Call{Session: "other", Server: "fs", Tool: call.Tool}
	d = h.Check(ctx, other)
	if err := h.Approve("other", &d, host.Always); err != nil {
		t.Fatal(err)
	}
	revokeAll(t, file)
	if d := h.Check(ctx, call); d.Decision != host.Allow {
		t.Fatalf("the session approval went with the always approval: %s", d.Decision)
	}
	if d := h.Check(ctx, other); d.Decision != host.Ask {
		t.Fatalf("the revoked always approval still applies: %s", d.Decision)
	}
}

// A corrupt approvals file does not stop the host: it starts, grants
// nothing from the file, says why, and an "always" answer is refused
// rather than written over the file.
func TestACorruptApprovalsFileGrantsNothingAndIsNotWrittenOver(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "approvals.json")
	const corrupt = `{"version": 1, "approvals": [{"app": "fs"`
	if err := os.WriteFile(file, []byte(corrupt), 0o600); err != nil {
		t.Fatal(err)
	}
	h := testhost.New(t, "", host.Defaults().WithApprovalsFile(file))
	if err := h.Approvals().Err(); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("Approvals().Err() = %v", err)
	}
	ctx := context.Background()
	call := host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile)}
	d := h.Check(ctx, call)
	if d.Decision != host.Ask {
		t.Fatalf("decision %s", d.Decision)
	}
	if err := h.Approve("s", &d, host.Always); err == nil {
		t.Fatal("always was recorded over an unreadable file")
	}
	if b, _ := os.ReadFile(file); string(b) != corrupt {
		t.Fatalf("the corrupt file was rewritten:\n%s", b)
	}
	if d := h.Check(ctx, call); d.Decision != host.Ask {
		t.Fatalf("after the refused always: %s", d.Decision)
	}
}

// benchApprovals is an approvals file granting the benchmark's call,
// written once and then left alone until it is older than the window in
// which a just-changed file's bytes are compared on every check: the
// benchmarks measure the steady state, a stat per check.
var benchApprovals = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "toolwarden-bench-approvals-")
	if err != nil {
		panic(err)
	}
	file := filepath.Join(dir, "approvals.json")
	p, _ := session.OpenPersistent(file)
	tl, _ := host.ParseTool([]byte(writeFile))
	if err := p.Add(session.ApprovalKey{App: "fs", Server: "fs", Tool: "write_file", Hash: tl.HashHex}, time.Now()); err != nil {
		panic(err)
	}
	time.Sleep(2100 * time.Millisecond)
	return file
})

// BenchmarkCheckRemembered is one host decision that asks and is then
// allowed by a remembered approval (pipeline step 6), the only decisions
// that look at the approvals file. "session" approvals are a map lookup;
// "always" ones stat the file on every check so that a revoke anywhere
// takes effect at once. "ask" decisions look in the file and find nothing.
// Compare each to its baseline in the same run.
func BenchmarkCheckRemembered(b *testing.B) {
	for _, c := range []struct {
		name  string
		file  bool
		scope host.Scope // how the call was approved; Once: not at all
		want  policy.Verdict
	}{
		{"session approval, no approvals file (baseline)", false, host.ForSession, host.Allow},
		{"session approval, approvals file", true, host.ForSession, host.Allow},
		{"always approval, approvals file", true, host.Always, host.Allow},
		{"ask, no approvals file (baseline)", false, host.Once, host.Ask},
		{"ask, approvals file without a grant for it", true, host.Once, host.Ask},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := host.Defaults()
			if c.file {
				s = s.WithApprovalsFile(benchApprovals())
			}
			h := testhost.New(b, benchConfig, s)
			tl := tool(b, writeFile)
			if c.file && c.scope != host.Always {
				// A definition the file holds no grant for.
				tl = tool(b, strings.Replace(writeFile, "Write a file", "Write a file!", 1))
			}
			call := host.Call{Session: "s", Server: "fs", Tool: tl, Arguments: []byte(`{"path":"/home/me/src/notes.txt","content":"hello"}`)}
			ctx := context.Background()
			d := h.Check(ctx, call)
			if c.scope == host.ForSession {
				if err := h.Approve("s", &d, c.scope); err != nil {
					b.Fatal(err)
				}
			}
			if d := h.Check(ctx, call); d.Decision != c.want {
				b.Fatalf("decision %s, want %s", d.Decision, c.want)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if d := h.Check(ctx, call); d.Decision != c.want {
					b.Fatal(d.Decision)
				}
			}
		})
	}
}

// BenchmarkCheckRememberedInterleaved is BenchmarkCheckRemembered's cases
// measured block by block in turn (a busy machine slows them alike). It
// reports each case's ns per decision and its ratio to its baseline:
// "always/session" is the cost of the revocation check on a decision the
// file allows, "askfile/ask" on an ask the file does not cover.
func BenchmarkCheckRememberedInterleaved(b *testing.B) {
	ctx := context.Background()
	args := []byte(`{"path":"/home/me/src/notes.txt","content":"hello"}`)
	granted := tool(b, writeFile)
	other := tool(b, strings.Replace(writeFile, "Write a file", "Write a file!", 1))
	withFile := testhost.New(b, benchConfig, host.Defaults().WithApprovalsFile(benchApprovals()))
	noFile := testhost.New(b, benchConfig, host.Defaults())
	d := noFile.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: granted, Arguments: args})
	if err := noFile.Approve("s", &d, host.ForSession); err != nil {
		b.Fatal(err)
	}
	check := func(h *host.Host, session string, tl *host.Tool, want policy.Verdict) func() bool {
		call := host.Call{Session: session, Server: "fs", Tool: tl, Arguments: args}
		return func() bool { return h.Check(ctx, call).Decision == want }
	}
	names := []string{"session", "always", "ask", "askfile"}
	cases := []func() bool{
		check(noFile, "s", granted, host.Allow),
		check(withFile, "s", granted, host.Allow),
		check(noFile, "t", other, host.Ask),
		check(withFile, "t", other, host.Ask),
	}
	for j, f := range cases {
		for range 2 { // the first call pins
			if !f() {
				b.Fatalf("%s: unexpected decision", names[j])
			}
		}
	}
	total := interleave.Blocks(b, names, cases)
	b.ReportMetric(float64(total[1])/float64(total[0]), "always/session")
	b.ReportMetric(float64(total[3])/float64(total[2]), "askfile/ask")
}
