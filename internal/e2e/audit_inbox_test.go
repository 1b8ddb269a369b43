package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// The decision log is on with no flag anywhere: from a fresh home, the
// TypeScript client (which gives wrap HOME and PATH, no XDG_*) makes five
// calls through wrap, and the inbox page, started with no --audit, shows
// each as one row with how it ended: allowed, denied by policy, allowed
// once in the page, denied in the page, expired. A revoke from the command
// line is a row of its own; a torn line in the log is read past and said,
// and the log is kept.
func TestTheInboxShowsEachCallOnceWithItsOutcomeFromAFreshHome(t *testing.T) {
	t.Parallel()
	s := newChannelSetup(t, inboxOnly+"\n[apps.fs.tools.create_directory]\nenabled = false\n")
	home := t.TempDir()
	page := startInboxIn(t, homeEnv(home, s.rv), "--config", s.cfg)
	b := openPage(t, page)

	args := []string{"wrap", "--app", "fs", "--config", s.cfg, "--approval-timeout", "25s", "--", s.fsBin, s.dir}
	env := map[string]string{"HOME": home, "TOOLWARDEN_CATALOG": os.Getenv("TOOLWARDEN_CATALOG"), inbox.EnvRuntimeDir: s.rv}
	run := startTS(t, map[string]any{"command": twBin, "args": args, "elicitation": false, "env": env, "steps": []tsStep{
		{Op: "call", Name: "list_allowed_directories"},
		{Op: "call", Name: "create_directory", Arguments: map[string]any{"path": filepath.Join(s.dir, "sub")}},
		s.write("once.txt", "1"),
		s.write("denied.txt", "2"),
		s.write("expired.txt", "3"),
	}})
	first := pageAsks(t, b, 1)[0]
	b.Click(answerButton(first, "allow_once"))
	waitGone(t, b, card(first))
	second := pageAsks(t, b, 1)[0]
	b.Click(answerButton(second, "deny"))
	waitGone(t, b, card(second))
	// The third ask is left to expire.
	res := run.wait(t)
	if len(res.Results) != 5 || res.Results[0].IsError || !res.Results[1].IsError || res.Results[2].IsError || !res.Results[3].IsError || !res.Results[4].IsError {
		t.Fatalf("the calls: %+v", res.Results)
	}

	want := []string{"allowed", "denied by policy", "allowed once by the user", "denied by the user", "expired: no answer in time"}
	waitRows(t, b, want)

	// A revoke from the command line, after a torn line in the log.
	log := filepath.Join(home, ".local", "state", "toolwarden", "audit.jsonl")
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatalf("the default audit log: %v", err)
	}
	f.WriteString(`{"time":"2026-01-01T00:00:00Z","event":"check","deci`)
	f.Close()
	hash := strings.Repeat("ab", 32)
	for _, cmd := range [][]string{{"approvals", "add", "--server", "fs", "--tool", "write_file", "--hash", hash}, {"approvals", "revoke", "--server", "fs"}} {
		c := exec.Command(twBin, cmd...)
		c.Env = homeEnv(home, s.rv)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("toolwarden %v: %v\n%s", cmd, err, out)
		}
	}
	waitRows(t, b, append(want, "always approval revoked"))
	eventually(t, pageWait, "the page to say a line could not be read", func() bool {
		return strings.Contains(b.Text("#decisions-file"), "1 line(s) could not be read")
	})
	if got, _ := os.ReadFile(log); !strings.Contains(string(got), `"event":"check","deci`+"\n") {
		t.Error("the torn line was not kept as it was")
	}
	pageShot(t, b, "inbox-call-outcomes.png", "#decisions-section")
	if problems := b.Problems(); len(problems) > 0 {
		t.Errorf("the page had problems:\n%s", strings.Join(problems, "\n"))
	}
}

// waitRows waits until the page's rows for server fs, oldest first, read
// want in the outcome column.
func waitRows(t *testing.T, b interface{ Eval(string, any) }, want []string) {
	t.Helper()
	var got []string
	eventually(t, pageWait, "the page's rows to be "+strings.Join(want, ", "), func() bool {
		b.Eval(`[...document.querySelectorAll("#decisions tbody tr")].filter((r) => r.cells[1].textContent === "fs").map((r) => r.cells[3].textContent).reverse()`, &got)
		return strings.Join(got, "|") == strings.Join(want, "|")
	})
}

// homeEnv is this process's environment with home as HOME and no XDG_*
// variable, as a fresh user's terminal that does not set them.
func homeEnv(home, rv string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "XDG_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, inbox.EnvRuntimeDir+"="+rv)
}

// startInboxIn runs `toolwarden inbox` with env and returns the address
// it prints; it is stopped with SIGINT when the test ends.
func startInboxIn(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(twBin, append([]string{"inbox", "--open=false"}, args...)...)
	cmd.Env = env
	cmd.Stderr = newLog(t, "toolwarden inbox")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	})
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatal("toolwarden inbox printed nothing")
	}
	u, _ := strings.CutPrefix(lines.Text(), "toolwarden inbox: ")
	go func() {
		for lines.Scan() {
		}
	}()
	return u
}
