package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/browser"
	"github.com/toolwarden/toolwarden/internal/inbox"
)

// Helpers for the inbox page driven by a real headless Chromium while real
// wrap processes ask (inbox_browser_test.go).

// pageWait is how long the page may take to show what a wrap process did:
// the npm server and the TypeScript client start in that time, under -race
// and next to the other parallel tests. It is a deadline, not a delay.
const pageWait = 90 * time.Second

// pageSetup is a channelSetup whose "always" approvals file is known, so
// that the inbox page lists and revokes what wrap stores.
type pageSetup struct {
	*channelSetup
	approvals string
	page      string // the inbox page's address, with its token
}

func newPageSetup(t *testing.T, body string) *pageSetup {
	t.Helper()
	s := &pageSetup{channelSetup: newChannelSetup(t, body)}
	s.approvals = filepath.Join(t.TempDir(), "approvals.json")
	s.page = startInboxPage(t, s.rv, "--approvals", s.approvals, "--audit", s.audit, "--config", s.cfg)
	return s
}

// script is a tsclient script: the TypeScript client (which cannot elicit,
// so the inbox is the only way to an answer) starts wrap with this setup's
// config, approvals file, audit log and rendezvous directory in front of
// server-filesystem, and runs steps.
func (s *pageSetup) script(t *testing.T, steps ...tsStep) map[string]any {
	args := []string{"wrap", "--app", "fs", "--approvals", s.approvals, "--config", s.cfg,
		"--audit", s.audit, "--approval-timeout", "2m", "--", s.fsBin, s.dir}
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "TOOLWARDEN_CATALOG": os.Getenv("TOOLWARDEN_CATALOG"), inbox.EnvRuntimeDir: s.rv}
	return map[string]any{"command": twBin, "args": args, "elicitation": false, "steps": steps, "env": env}
}

// startInboxPage runs `toolwarden inbox` on the rendezvous directory rv and
// returns the address it prints (with the per-run token), as a person
// would copy it from the terminal. It is stopped with SIGINT when the test
// ends, as Ctrl-C stops it.
func startInboxPage(t *testing.T, rv string, args ...string) string {
	t.Helper()
	cmd := exec.Command(twBin, append([]string{"inbox", "--open=false"}, args...)...)
	cmd.Env = append(os.Environ(), inbox.EnvRuntimeDir+"="+rv)
	stderr := newLog(t, "toolwarden inbox")
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("toolwarden inbox: %v", err)
		}
	})
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("toolwarden inbox printed nothing")
	}
	u, ok := strings.CutPrefix(lines.Text(), "toolwarden inbox: ")
	if !ok || !strings.Contains(u, "t=") {
		t.Fatalf("toolwarden inbox's first line %q has no address with a token", lines.Text())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	return u
}

// openPage loads the inbox page in a new headless Chromium and waits for
// its live stream.
func openPage(t *testing.T, url string) *browser.Browser {
	t.Helper()
	b := browser.Start(t)
	if status := b.Goto(url); status != 200 {
		t.Fatalf("the inbox page: HTTP %d", status)
	}
	waitFor(t, b, `#status[data-state="live"]`)
	return b
}

// waitFor waits, up to pageWait, until an element matching selector is
// visible in the page.
func waitFor(t *testing.T, b *browser.Browser, selector string) {
	t.Helper()
	if _, err := b.Do(map[string]any{"op": "wait", "selector": selector, "timeout_ms": pageWait.Milliseconds()}); err != nil {
		t.Fatalf("browser: waiting for %s: %v", selector, err)
	}
}

// waitGone waits, up to pageWait, until no element matching selector is
// visible.
func waitGone(t *testing.T, b *browser.Browser, selector string) {
	t.Helper()
	if _, err := b.Do(map[string]any{"op": "waitGone", "selector": selector, "timeout_ms": pageWait.Milliseconds()}); err != nil {
		t.Fatalf("browser: waiting for %s to go: %v", selector, err)
	}
}

// askIDs returns the ids of the asks the page shows, in its order.
func askIDs(t *testing.T, b *browser.Browser) []string {
	t.Helper()
	var ids []string
	b.Eval(`[...document.querySelectorAll("#asks article.ask")].map((a) => a.dataset.askId)`, &ids)
	return ids
}

// pageAsks waits until the page shows n asks and returns their ids.
func pageAsks(t *testing.T, b *browser.Browser, n int) []string {
	t.Helper()
	var ids []string
	eventually(t, pageWait, "the page to show "+strconv.Itoa(n)+" ask(s)", func() bool {
		ids = askIDs(t, b)
		return len(ids) == n
	})
	return ids
}

// card is the selector of the page's card for ask id.
func card(id string) string { return `article.ask[data-ask-id="` + id + `"]` }

// answerButton is the selector of the button answering ask id with option.
func answerButton(id, option string) string {
	return `button[data-ask-id="` + id + `"][data-option="` + option + `"]`
}

// field is the text of one data-field of ask id's card.
func field(t *testing.T, b *browser.Browser, id, name string) string {
	t.Helper()
	return b.Text(card(id) + ` [data-field="` + name + `"]`)
}

// gate is a step that stops the client between two calls: it creates
// <dir>/reached, then waits (up to pageWait) for <dir>/go. The test waits
// for the first and creates the second, so that what it does in between
// (a revoke) happens before the next call.
func gate(dir string) tsStep {
	reached, next := filepath.Join(dir, "reached"), filepath.Join(dir, "go")
	polls := strconv.Itoa(int(pageWait / (50 * time.Millisecond)))
	sh := `touch "$1"; i=0; while [ ! -e "$2" ]; do i=$((i+1)); if [ $i -gt ` + polls + ` ]; then echo "no $2" >&2; exit 1; fi; sleep 0.05; done`
	return tsStep{Op: "run", Name: "sh", Arguments: map[string]any{"args": []string{"-c", sh, "gate", reached, next}}}
}

// pageShot saves a screenshot of the element matching selector into
// $TOOLWARDEN_SCREENSHOTS (docs/images when refreshing the docs), and
// nowhere when it is unset, so that running the tests never rewrites
// tracked files.
func pageShot(t *testing.T, b *browser.Browser, name, selector string) {
	t.Helper()
	dir := os.Getenv("TOOLWARDEN_SCREENSHOTS")
	if dir == "" {
		return
	}
	if !filepath.IsAbs(dir) {
		// go test runs in the package's folder; a relative path names one
		// under the module root, as the docs write it.
		dir = filepath.Join(root, dir)
	}
	b.Screenshot(filepath.Join(dir, name), selector)
	t.Logf("screenshot %s", filepath.Join(dir, name))
}
