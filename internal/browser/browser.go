// Package browser drives a real headless Chromium (Debian's) from Go tests,
// through puppeteer-core and internal/inbox/testdata/browser.mjs: one command at
// a time, so a test can interleave browser steps with its own.
//
//	b := browser.Start(t)
//	b.Goto(url)
//	b.Wait(`article[data-ask-id="` + id + `"]`)
//	b.Click(`button[data-ask-id="` + id + `"][data-option="allow_once"]`)
package browser

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// Chromium returns the Chromium to drive: $CHROMIUM, else chromium (or
// chromium-browser) on the PATH, as scripts/setup.sh installs it.
func Chromium() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on the PATH (scripts/setup.sh installs Debian's chromium)")
}

// Browser is one headless Chromium with one page.
type Browser struct {
	t      testing.TB
	mu     sync.Mutex
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *strings.Builder
}

// Start launches Chromium for the test and closes it when the test ends.
// The test is skipped when Chromium, node or puppeteer-core is missing
// (failed instead under TOOLWARDEN_REQUIRE_TOOLCHAINS=1).
func Start(t testing.TB) *Browser {
	t.Helper()
	chromium, err := Chromium()
	testkit.Need(t, "chromium", err)
	_, err = exec.LookPath("node")
	testkit.Need(t, "node", err)
	npm := testkit.Path("scripts", "npm")
	_, err = os.Stat(filepath.Join(npm, "node_modules", "puppeteer-core", "package.json"))
	testkit.Need(t, "npm package puppeteer-core", err)

	cmd := exec.Command("node", testkit.Path("internal", "inbox", "testdata", "browser.mjs"))
	cmd.Env = append(os.Environ(), "NPM_DIR="+npm, "CHROMIUM="+chromium)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the browser driver: %v", err)
	}
	b := &Browser{t: t, cmd: cmd, in: in, out: bufio.NewScanner(out), stderr: &stderr}
	b.out.Buffer(make([]byte, 1<<20), 16<<20)
	t.Cleanup(b.close)
	if _, err := b.read(); err != nil {
		t.Fatalf("the browser did not start: %v\n%s", err, stderr.String())
	}
	return b
}

func (b *Browser) close() {
	b.Do(map[string]any{"op": "close"})
	b.in.Close()
	b.cmd.Wait()
}

func (b *Browser) read() (json.RawMessage, error) {
	if !b.out.Scan() {
		return nil, fmt.Errorf("the browser driver exited: %v\n%s", b.out.Err(), b.stderr.String())
	}
	var r struct {
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Error string          `json:"error"`
	}
	if err := json.Unmarshal(b.out.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("browser driver reply %q: %v", b.out.Text(), err)
	}
	if !r.OK {
		return nil, errors.New(r.Error)
	}
	return r.Value, nil
}

// Do sends one command (see browser.mjs) and returns its value.
func (b *Browser) Do(cmd map[string]any) (json.RawMessage, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	line, _ := json.Marshal(cmd)
	if _, err := b.in.Write(append(line, '\n')); err != nil {
		return nil, fmt.Errorf("browser driver: %v", err)
	}
	return b.read()
}

// must runs a command and fails the test on error.
func (b *Browser) must(what string, cmd map[string]any, into any) {
	b.t.Helper()
	v, err := b.Do(cmd)
	if err != nil {
		b.t.Fatalf("browser: %s: %v", what, err)
	}
	if into != nil {
		if err := json.Unmarshal(v, into); err != nil {
			b.t.Fatalf("browser: %s: %v", what, err)
		}
	}
}

// Goto loads url and returns the HTTP status of the response.
func (b *Browser) Goto(url string) int {
	b.t.Helper()
	var status int
	b.must("goto "+url, map[string]any{"op": "goto", "url": url}, &status)
	return status
}

// Wait waits until an element matching selector is visible.
func (b *Browser) Wait(selector string) {
	b.t.Helper()
	b.must("wait for "+selector, map[string]any{"op": "wait", "selector": selector}, nil)
}

// WaitGone waits until no element matching selector is visible.
func (b *Browser) WaitGone(selector string) {
	b.t.Helper()
	b.must("wait for "+selector+" to go", map[string]any{"op": "waitGone", "selector": selector}, nil)
}

// Click clicks the element matching selector, once it is visible.
func (b *Browser) Click(selector string) {
	b.t.Helper()
	b.must("click "+selector, map[string]any{"op": "click", "selector": selector}, nil)
}

// Text returns the text of the element matching selector.
func (b *Browser) Text(selector string) string {
	b.t.Helper()
	var s string
	b.must("text of "+selector, map[string]any{"op": "text", "selector": selector}, &s)
	return s
}

// Count returns how many elements match selector.
func (b *Browser) Count(selector string) int {
	b.t.Helper()
	var n int
	b.must("count "+selector, map[string]any{"op": "count", "selector": selector}, &n)
	return n
}

// Eval evaluates a JavaScript expression in the page into v.
func (b *Browser) Eval(js string, v any) {
	b.t.Helper()
	b.must("eval", map[string]any{"op": "eval", "js": js}, v)
}

// URL returns the page's current address.
func (b *Browser) URL() string {
	b.t.Helper()
	var s string
	b.must("url", map[string]any{"op": "url"}, &s)
	return s
}

// Screenshot saves a PNG of the page (or of the element matching
// selector, when not empty) to path.
func (b *Browser) Screenshot(path, selector string) {
	b.t.Helper()
	cmd := map[string]any{"op": "screenshot", "path": path}
	if selector != "" {
		cmd["selector"] = selector
	}
	b.must("screenshot", cmd, nil)
}

// Problems returns the console errors, page errors and
// Content-Security-Policy violations since the last call.
func (b *Browser) Problems() []string {
	b.t.Helper()
	var p []string
	b.must("problems", map[string]any{"op": "problems"}, &p)
	return p
}

// Select picks the option with value in the <select> matching selector.
func (b *Browser) Select(selector, value string) {
	b.t.Helper()
	b.must("select "+value+" in "+selector, map[string]any{"op": "select", "selector": selector, "value": value}, nil)
}
