package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/session"
)

// The approval inbox end to end: `toolwarden inbox` serving its page to a
// real headless Chromium, real asks from `wrap` (approval_channel =
// "inbox") in front of the npm server-filesystem, called by the official
// TypeScript client, and every answer given by clicking in the page.

const inboxOnly = "approval_channel = \"inbox\"\n"

// The page shows a real ask from wrap (tool, server, the path as text);
// "Allow once" in the page lets the client's call run, and an identical
// second call is asked about again.
func TestTheInboxPageAnswersARealAskFromWrap(t *testing.T) {
	t.Parallel()
	s := newPageSetup(t, inboxOnly)
	b := openPage(t, s.page)
	const content = "written after a click in the inbox page"
	run := startTS(t, s.script(t, s.write("once.txt", content), s.write("once.txt", content)))

	first := pageAsks(t, b, 1)[0]
	path := filepath.Join(s.dir, "once.txt")
	if got := field(t, b, first, "tool"); got != "write_file" {
		t.Errorf("tool shown as %q", got)
	}
	if got := field(t, b, first, "server"); got != "fs" {
		t.Errorf("server shown as %q", got)
	}
	if got := field(t, b, first, "arguments"); !strings.Contains(got, path) || !strings.Contains(got, content) {
		t.Errorf("arguments shown as %q; want the path %s and the content", got, path)
	}
	if got := field(t, b, first, "origin"); !strings.Contains(got, "wrap") {
		t.Errorf("origin shown as %q; want wrap", got)
	}
	// What the page shows is the ask wrap posted, not a copy of another.
	if asks := s.asks(t, 1); asks[0].ID != first || asks[0].Origin != "wrap" || asks[0].Tool != "write_file" {
		t.Fatalf("the inbox holds %+v; the page shows %s", asks, first)
	}
	if s.exists("once.txt") {
		t.Fatal("the file was written before anyone answered")
	}
	pageShot(t, b, "inbox-wrap-ask.png", "#asks-section")

	b.Click(answerButton(first, "allow_once"))
	waitGone(t, b, card(first))
	// Once is once: the same call again, from the same session, asks again.
	second := pageAsks(t, b, 1)[0]
	if second == first {
		t.Fatal("the answered ask is still shown")
	}
	if got := field(t, b, second, "arguments"); !strings.Contains(got, path) {
		t.Errorf("second ask's arguments %q", got)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != content {
		t.Errorf("after allow once: %q, %v; want %q", got, err, content)
	}
	b.Click(answerButton(second, "deny"))
	waitFor(t, b, "#no-asks")

	res := run.wait(t)
	if r := res.Results[0]; r.IsError {
		t.Errorf("the call allowed in the page failed: %+v", r)
	}
	if r := res.Results[1]; !r.IsError || !strings.Contains(r.Text, "the user denied") {
		t.Errorf("the second call (denied in the page) was not denied: %+v", r)
	}
	if n := s.askFiles(t); n != 0 {
		t.Errorf("%d ask files left", n)
	}
	log := s.auditLog(t)
	mustContain(t, log, `"channel":"inbox","outcome":"answered","option":"allow_once","by":"inbox"`)
	mustContain(t, log, `"channel":"inbox","outcome":"answered","option":"deny","by":"inbox"`)
	if problems := b.Problems(); len(problems) > 0 {
		t.Errorf("the page had problems:\n%s", strings.Join(problems, "\n"))
	}
}

// Two wrap processes, each with its own client, ask at the same time: the
// open page shows both without a reload, each answer reaches its own
// asker, and both disappear.
func TestTheInboxPageAnswersTwoAsksFromTwoProcessesAtOnce(t *testing.T) {
	t.Parallel()
	s := newPageSetup(t, inboxOnly)
	b := openPage(t, s.page)
	waitFor(t, b, "#no-asks")
	b.Eval(`window.__sameDocument = 42`, nil)
	allowed := startTS(t, s.script(t, s.write("allowed.txt", "a")))
	denied := startTS(t, s.script(t, s.write("denied.txt", "d")))

	ids := pageAsks(t, b, 2)
	var same int
	b.Eval(`window.__sameDocument`, &same)
	if same != 42 {
		t.Fatal("the page reloaded to show the asks")
	}
	byFile := map[string]string{}
	origins := map[string]bool{}
	for _, id := range ids {
		args := field(t, b, id, "arguments")
		switch {
		case strings.Contains(args, "allowed.txt"):
			byFile["allowed.txt"] = id
		case strings.Contains(args, "denied.txt"):
			byFile["denied.txt"] = id
		}
		origins[field(t, b, id, "origin")] = true
	}
	if len(byFile) != 2 || len(origins) != 2 {
		t.Fatalf("the page does not show one ask from each process: %v, origins %v", byFile, origins)
	}
	if s.exists("allowed.txt") || s.exists("denied.txt") {
		t.Fatal("a file was written before anyone answered")
	}

	b.Click(answerButton(byFile["denied.txt"], "deny"))
	waitGone(t, b, card(byFile["denied.txt"]))
	// The other ask is untouched by that answer: still shown, still
	// waiting, its file not written.
	waitFor(t, b, card(byFile["allowed.txt"])+`[data-state="pending"]`)
	if s.exists("allowed.txt") {
		t.Fatal("the denial answered the other ask")
	}
	b.Click(answerButton(byFile["allowed.txt"], "allow_once"))
	waitGone(t, b, card(byFile["allowed.txt"]))
	waitFor(t, b, "#no-asks")

	if r := allowed.wait(t).Results[0]; r.IsError || !s.exists("allowed.txt") {
		t.Errorf("the call allowed in the page: %+v", r)
	}
	r := denied.wait(t).Results[0]
	if !r.IsError || s.exists("denied.txt") {
		t.Errorf("the call denied in the page: %+v", r)
	}
	mustContain(t, r.Text, "the user denied")
	if asks, err := inbox.List(s.rv); err != nil || len(asks) != 0 {
		t.Errorf("asks left in the inbox: %v %v", asks, err)
	}
	if problems := b.Problems(); len(problems) > 0 {
		t.Errorf("the page had problems:\n%s", strings.Join(problems, "\n"))
	}
}

// "Always" given in the page lets the next call through without an ask;
// a revoke in the page's standing approvals makes the very next call ask
// again, and that call waits for the page's answer (a deny). The recent
// decisions table then shows the decisions of those calls from the audit
// log.
func TestARevokeInThePageStopsTheNextCall(t *testing.T) {
	t.Parallel()
	s := newPageSetup(t, inboxOnly)
	b := openPage(t, s.page)
	waitFor(t, b, "#no-approvals")
	gates := t.TempDir()
	run := startTS(t, s.script(t,
		s.write("always.txt", "1"),
		s.write("remembered.txt", "2"),
		gate(gates),
		s.write("after-revoke.txt", "3")))

	first := pageAsks(t, b, 1)[0]
	// write_file is destructive under the default auto mode: the decision
	// may be remembered, and wrap has an approvals file, so "always" is
	// offered.
	b.Click(answerButton(first, "always"))
	waitGone(t, b, card(first))

	// The approval is listed in the page, and the client reached the gate
	// without another ask.
	row := `#approvals tr[data-server="fs"][data-tool="write_file"]`
	waitFor(t, b, row)
	eventually(t, pageWait, "the client to reach the gate", func() bool { return fileExists(filepath.Join(gates, "reached")) })
	if !s.exists("always.txt") || !s.exists("remembered.txt") {
		t.Fatal("the calls before the revoke did not both run")
	}
	if n := strings.Count(s.auditLog(t), `"channel":"inbox","outcome":"posted"`); n != 1 {
		t.Fatalf("%d asks posted before the revoke; want 1 (the call after \"always\" must not ask)", n)
	}
	p, err := session.OpenPersistent(s.approvals)
	if err != nil {
		t.Fatal(err)
	}
	grants, err := p.List()
	if err != nil || len(grants) != 1 || grants[0].Tool != "write_file" {
		t.Fatalf("approvals file: %+v %v; want one for write_file", grants, err)
	}
	var hash string
	b.Eval(`document.querySelector(`+jsString(row)+`).dataset.hash`, &hash)
	if hash != grants[0].Hash {
		t.Fatalf("the page lists %q; the file holds %q", hash, grants[0].Hash)
	}

	b.Click(`button[data-revoke="` + hash + `"]`)
	waitGone(t, b, row)
	waitFor(t, b, "#no-approvals")
	if grants, err := p.List(); err != nil || len(grants) != 0 {
		t.Fatalf("approvals file after the revoke: %+v %v", grants, err)
	}
	if err := os.WriteFile(filepath.Join(gates, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	// The very next call asks, in the page and in the inbox, and waits.
	third := pageAsks(t, b, 1)[0]
	if got := field(t, b, third, "arguments"); !strings.Contains(got, "after-revoke.txt") {
		t.Fatalf("the ask after the revoke: %q", got)
	}
	if asks := s.asks(t, 1); asks[0].ID != third {
		t.Fatalf("the inbox holds %+v; the page shows %s", asks, third)
	}
	select {
	case <-run.done:
		t.Fatal("the call after the revoke ended before it was answered")
	default:
	}
	if s.exists("after-revoke.txt") {
		t.Fatal("the call after the revoke ran without an answer")
	}
	b.Click(answerButton(third, "deny"))
	waitGone(t, b, card(third))

	res := run.wait(t)
	for i, r := range res.Results[:2] {
		if r.IsError {
			t.Errorf("call %d before the revoke: %+v", i, r)
		}
	}
	if r := res.Results[2]; r.Thrown != "" {
		t.Fatalf("the gate: %+v", r)
	}
	if r := res.Results[3]; !r.IsError || !strings.Contains(r.Text, "the user denied") || s.exists("after-revoke.txt") {
		t.Errorf("the call after the revoke, denied in the page: %+v", r)
	}

	// The audit log holds the decisions of those calls: asked, always
	// approved; allowed by that approval; asked after the revoke (and
	// denied, which is an answer, not a decision record).
	if got, w := auditDecisions(t, s.audit, "fs", "write_file"), []string{"ask", "approved always", "allow", "ask"}; strings.Join(got, ",") != strings.Join(w, ",") {
		t.Fatalf("the audit log holds %q for write_file; want %q", got, w)
	}
	// The page shows each call once, with how it ended, and the revoke.
	want := []string{"allowed always by the user", "allowed", "always approval revoked", "denied by the user"}
	rows := `#decisions tbody tr`
	var got []string
	eventually(t, pageWait, "the page's decisions to match the audit log", func() bool {
		b.Eval(`[...document.querySelectorAll(`+jsString(rows)+`)].filter((r) => r.cells[1].textContent === "fs" && r.cells[2].textContent === "write_file").map((r) => r.cells[3].textContent).reverse()`, &got)
		return strings.Join(got, ",") == strings.Join(want, ",")
	})
	if n := b.Count(`#chart svg rect[data-group="fs/write_file"]`); n == 0 {
		t.Error("the chart has no bar for fs/write_file")
	}
	pageShot(t, b, "inbox-wrap-decisions.png", "#decisions-section")
	if problems := b.Problems(); len(problems) > 0 {
		t.Errorf("the page had problems:\n%s", strings.Join(problems, "\n"))
	}
}

// auditDecisions reads the decisions on server's tool from the audit log
// as the page lists them: a check's verdict, or "approved <scope>".
func auditDecisions(t *testing.T, file, server, tool string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Event, Scope string
			Decision     struct{ Decision, Server, Tool string }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if r.Decision.Server != server || r.Decision.Tool != tool {
			continue
		}
		switch r.Event {
		case "check":
			out = append(out, r.Decision.Decision)
		case "approve":
			out = append(out, "approved "+r.Scope)
		}
	}
	return out
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
