package web_test

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/browser"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

// binary is the toolwarden command the browser tests drive, built once.
var binary string

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "toolwarden-inbox-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(tmp, "toolwarden")
	args := []string{"build", "-o", binary}
	if cover := os.Getenv("TOOLWARDEN_E2E_COVERDIR"); cover != "" {
		// scripts/coverage.sh: the binary's runs count too, written into
		// GOCOVERDIR, which the inbox processes inherit.
		args = append(args, "-cover", "-coverpkg=github.com/toolwarden/toolwarden/...")
		os.Setenv("GOCOVERDIR", cover)
	}
	build := exec.Command("go", append(args, "./cmd/toolwarden")...)
	build.Dir = testkit.Root()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building toolwarden:", err)
		os.RemoveAll(tmp)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

// inboxProcess is a running `toolwarden inbox`.
type inboxProcess struct {
	url string // with the token
	dir string
}

// startInbox runs `toolwarden inbox` on rendezvous directory dir and stops
// it (SIGINT) when the test ends, checking it withdrew its announcement.
func startInbox(t *testing.T, dir string, args ...string) *inboxProcess {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"inbox", "--open=false"}, args...)...)
	cmd.Env = append(os.Environ(), inbox.EnvRuntimeDir+"="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		cmd.Wait()
		t.Fatalf("toolwarden inbox printed nothing: %s", stderr.String())
	}
	u, ok := strings.CutPrefix(lines.Text(), "toolwarden inbox: ")
	if !ok {
		t.Fatalf("first line %q", lines.Text())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("toolwarden inbox: %v\n%s", err, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "inbox.json")); !os.IsNotExist(err) {
			t.Errorf("inbox.json outlived the inbox: %v", err)
		}
	})
	return &inboxProcess{url: u, dir: dir}
}

// shot saves a screenshot into $TOOLWARDEN_SCREENSHOTS (docs/images when
// refreshing the docs), and nowhere when it is unset, so that running the
// tests never rewrites tracked files.
func shot(t *testing.T, b *browser.Browser, name, selector string) {
	dir := os.Getenv("TOOLWARDEN_SCREENSHOTS")
	if dir == "" {
		return
	}
	if !filepath.IsAbs(dir) {
		// go test runs in this package's folder; the docs name the
		// folder from the module root (docs/images).
		dir = testkit.Path(dir)
	}
	b.Screenshot(filepath.Join(dir, name), selector)
	t.Logf("screenshot %s", filepath.Join(dir, name))
}

func privateDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "rv")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// demoAsk is an ask as wrap posts it for a write the filesystem server
// would make, with an attempt at HTML in its arguments.
func demoAsk() inbox.Ask {
	return inbox.Ask{
		Origin: "wrap", Session: "a1b2c3d4", Server: "filesystem", Tool: "write_file", App: "filesystem",
		Title:   "filesystem wants to run write_file",
		Reasons: []string{"The tool may change or delete data (destructiveHint is not false).", "argguard: writes under ~/project/docs/** need approval"},
		Hints:   inbox.Hints{Values: map[string]bool{"readOnlyHint": false, "destructiveHint": true, "openWorldHint": false}, Trust: "pinned"},
		Arguments: "path: \"/home/dev/project/docs/release-notes.md\"\n" +
			"content: \"## 1.4.0\\n- The approval inbox <img src=x onerror=alert(1)>\\n- Webhook channel\"",
		Digest: "9f2c41d0b7a35e8c6f1d2a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d",
		Scope:  "path under /home/dev/project/docs/**",
		Options: []inbox.Option{
			{ID: "allow_once", Title: "Allow once"},
			{ID: "allow_session", Title: "Allow for this session"},
			{ID: "allow_session_scoped", Title: "Allow for this session, path under /home/dev/project/docs/**"},
			{ID: "always", Title: "Always allow"},
			{ID: "deny", Title: "Deny"},
		},
		Expires: time.Now().Add(10 * time.Minute),
	}
}

// demoAudit writes three hours of decisions, as wrap and proxy log them.
func demoAudit(t *testing.T, file string) int {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := audit.New(f)
	tools := []struct {
		server, tool string
		verdicts     []policy.Verdict
	}{
		{"filesystem", "read_file", []policy.Verdict{policy.Allow}},
		{"filesystem", "write_file", []policy.Verdict{policy.Ask, policy.Ask, policy.Allow}},
		{"github", "create_issue", []policy.Verdict{policy.Ask, policy.Allow}},
		{"github", "push_files", []policy.Verdict{policy.Deny}},
		{"memory", "create_entities", []policy.Verdict{policy.Allow, policy.Allow, policy.Ask}},
	}
	start := time.Now().Add(-3 * time.Hour)
	n := 0
	for i := range 180 {
		for j, tl := range tools {
			// A steady mix, busier towards the end, each tool at its own rate.
			if (i+j)%(len(tools)-j+1) != 0 && i%(9-j) != 0 {
				continue
			}
			v := tl.verdicts[(i/3+j)%len(tl.verdicts)]
			l.Write(audit.Record{Time: start.Add(time.Duration(i) * time.Minute), Event: "check", Session: "a1b2c3d4", Decision: &policy.Decision{
				Decision: v, Server: tl.server, App: tl.server, Tool: tl.tool,
				Reasons: []policy.Reason{{Source: "baseline", Code: "auto", Message: "approval_mode auto: " + v.String()}},
			}})
			n++
		}
	}
	f.WriteString("a line that is not a record\n")
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// The inbox in a real headless Chromium against the real command: an ask
// posted by a process shows with its arguments (as text, never HTML);
// "Allow once" answers the asker's Wait; a second ask appears without a
// reload; answered and withdrawn asks disappear; a revoke removes the
// approval from the file; the chart and table show the audit log; an
// answer link answers its ask once; and nothing breaks the page's
// Content-Security-Policy.
func TestTheInboxInAHeadlessBrowser(t *testing.T) {
	b := browser.Start(t)
	dir := privateDir(t)
	files := t.TempDir()
	approvals := filepath.Join(files, "approvals.json")
	p, _ := session.OpenPersistent(approvals)
	keep := session.ApprovalKey{App: "memory", Server: "memory", Tool: "read_graph", Hash: strings.Repeat("5e", 32)}
	drop := session.ApprovalKey{App: "filesystem", Server: "filesystem", Tool: "list_directory", Hash: strings.Repeat("c7", 32)}
	p.Add(keep, time.Now().Add(-26*time.Hour))
	p.Add(drop, time.Now().Add(-2*time.Hour))
	auditFile := filepath.Join(files, "audit.jsonl")
	decisions := demoAudit(t, auditFile)
	cfg := filepath.Join(files, "config.toml")
	os.WriteFile(cfg, []byte("approval_channel = \"both\"\n\n[mcp_servers.filesystem]\ncommand = \"mcp-server-filesystem\"\n"), 0o600)

	ib := startInbox(t, dir, "--approvals", approvals, "--audit", auditFile, "--config", cfg)

	first, err := inbox.Post(dir, demoAsk())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	card := `article.ask[data-ask-id="` + first.ID() + `"]`

	if status := b.Goto(ib.url); status != 200 {
		t.Fatalf("the page: status %d", status)
	}
	if u := b.URL(); strings.Contains(u, "t=") {
		t.Errorf("the token stayed in the address bar: %s", u)
	}
	b.Wait(`#status[data-state="live"]`)
	b.Wait(card)
	if got, want := b.Text(card+` [data-field="arguments"]`), demoAsk().Arguments; got != want {
		t.Errorf("arguments shown:\n%s\nwant:\n%s", got, want)
	}
	if n := b.Count(card + " img"); n != 0 {
		t.Errorf("the arguments' HTML became %d element(s)", n)
	}
	for field, want := range map[string]string{"tool": "write_file", "server": "filesystem", "digest": "sha256:" + demoAsk().Digest, "session": "a1b2c3d4"} {
		if got := b.Text(card + ` [data-field="` + field + `"]`); got != want {
			t.Errorf("%s shown as %q; want %q", field, got, want)
		}
	}
	if got := b.Text(card + ` [data-field="origin"]`); !strings.Contains(got, fmt.Sprint(os.Getpid())) {
		t.Errorf("origin %q does not name the asking pid", got)
	}
	if n := b.Count(`button[data-ask-id="` + first.ID() + `"][data-option]`); n != len(demoAsk().Options) {
		t.Errorf("%d answer buttons; want one per option (%d)", n, len(demoAsk().Options))
	}
	b.Wait(`#chart svg rect[data-group]`)
	b.Wait(`#approvals tr[data-hash="` + drop.Hash + `"]`)
	shot(t, b, "inbox-ask.png", "#asks-section")

	// A second ask while the page is open appears without a reload.
	b.Eval(`window.__sameDocument = 42`, nil)
	second := demoAsk()
	second.Tool, second.Server, second.Arguments = "create_issue", "github", "repo: \"acme/app\"\ntitle: \"Flaky test\""
	second.Options = []inbox.Option{{ID: "allow_once", Title: "Allow once"}, {ID: "deny", Title: "Deny"}}
	other, err := inbox.Post(dir, second)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	b.Wait(`article.ask[data-ask-id="` + other.ID() + `"]`)
	var same int
	b.Eval(`window.__sameDocument`, &same)
	if same != 42 {
		t.Error("the page reloaded to show the second ask")
	}

	// Allow once answers the asker.
	answered := make(chan inbox.Answer, 1)
	go func() {
		ans, err := first.Wait(context.Background())
		if err != nil {
			t.Errorf("Wait: %v", err)
		}
		answered <- ans
	}()
	b.Click(`button[data-ask-id="` + first.ID() + `"][data-option="allow_once"]`)
	ans := <-answered
	if ans.Option != "allow_once" || ans.Channel != "inbox" {
		t.Errorf("the asker got %+v; want allow_once from the inbox", ans)
	}
	b.WaitGone(card) // answered: gone before its asker withdraws it
	first.Close()
	other.Close() // withdrawn: answered elsewhere, or the call ended
	b.WaitGone(`article.ask[data-ask-id="` + other.ID() + `"]`)
	b.Wait(`#no-asks`)

	// Standing approvals and the decisions chart.
	if n := b.Count(`#decisions tbody tr`); n != min(decisions, 50) {
		t.Errorf("%d decisions in the table; want %d", n, min(decisions, 50))
	}
	if n := b.Count(`#chart svg rect[data-group]`); n < 10 {
		t.Errorf("the chart has %d bar segments", n)
	}
	if got := b.Text(`#decisions-file`); !strings.Contains(got, "1 line(s)") {
		t.Errorf("the skipped line is not reported: %q", got)
	}
	shot(t, b, "inbox-approvals.png", "#approvals-section")
	shot(t, b, "inbox-chart.png", "#chart")
	b.Click(`button[data-revoke="` + drop.Hash + `"]`)
	b.WaitGone(`#approvals tr[data-hash="` + drop.Hash + `"]`)
	p2, _ := session.OpenPersistent(approvals)
	if g, err := p2.List(); err != nil || len(g) != 1 || g[0].ApprovalKey != keep {
		t.Errorf("the approvals file after the revoke: %+v %v; want only %+v", g, err, keep)
	}
	b.Select(`#chart-group`, "decision")
	b.Wait(`#chart svg rect[data-group="deny"]`)
	shot(t, b, "inbox-chart-by-decision.png", "#chart")

	if problems := b.Problems(); len(problems) > 0 {
		t.Errorf("the page had problems:\n%s", strings.Join(problems, "\n"))
	}

	// A one-time answer link answers its ask, once.
	third, err := inbox.Post(dir, second)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	link, err := inbox.MintLink(dir, third.ID())
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(link); !strings.HasPrefix(ib.url, "http://"+u.Host+"/") {
		t.Errorf("link %s is not on the inbox %s", link, ib.url)
	}
	b.Goto(link)
	b.Wait(`article.ask[data-ask-id="` + third.ID() + `"]`)
	if n := b.Count(`#approvals-section:not([hidden])`); n != 1 || b.Count(`article.ask`) != 1 {
		t.Errorf("the link page shows more than its ask")
	}
	go func() {
		ans, err := third.Wait(context.Background())
		if err != nil {
			t.Errorf("Wait: %v", err)
		}
		answered <- ans
	}()
	b.Click(`button[data-ask-id="` + third.ID() + `"][data-option="deny"]`)
	if ans := <-answered; ans.Option != "deny" || ans.Channel != "webhook-link" {
		t.Errorf("the asker got %+v; want deny through the link", ans)
	}
	if status := b.Goto(link); status != 403 {
		t.Errorf("the used link again: status %d; want 403", status)
	}
}
