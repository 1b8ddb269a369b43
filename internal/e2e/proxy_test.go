package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// proxyArgs is "proxy" with a private approvals file and the configs.
func proxyArgs(t testing.TB, configs ...string) []string {
	args := []string{"proxy", "--approvals", filepath.Join(t.TempDir(), "approvals.json")}
	for _, c := range configs {
		args = append(args, "--config", c)
	}
	return args
}

// startHTTPTestServer runs testserver on streamable HTTP and returns its URL.
func startHTTPTestServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(testServer, "-http", addr, "-state", t.TempDir())
	cmd.Stderr = newLog(t, "http testserver")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	eventually(t, 10*time.Second, "the HTTP test server to listen", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr + "/mcp"
}

// proxy serves every enabled [mcp_servers.*] as <server>__<tool>: stdio and
// streamable HTTP upstreams, Codex's environment rules (default variables,
// env_vars, env, cwd), headers and bearer token from the environment,
// enabled_tools / disabled_tools, and enabled = false.
func TestProxyAggregatesConfiguredServers(t *testing.T) {
	t.Parallel()
	url := startHTTPTestServer(t)
	cwd := t.TempDir()
	cwd, _ = filepath.EvalSymlinks(cwd)
	cfg := writeFile(t, "proxy.toml", fmt.Sprintf(`
[mcp_servers.local]
command = %q
args = ["-state", %q]
cwd = %q
env = { FROM_ENV = "set in env" }
env_vars = ["TW_PASSED"]
disabled_tools = ["crash", "flaky", "flaky_write"]

[mcp_servers.remote]
url = %q
http_headers = { "X-Test" = "static" }
bearer_token_env_var = "TW_TOKEN"
enabled_tools = ["echo", "headers"]

[mcp_servers.off]
command = "/nonexistent/should-never-start"
enabled = false
`, testServer, t.TempDir(), cwd, url))

	lg := newLog(t, "toolwarden proxy")
	cmd := exec.Command(twBin, proxyArgs(t, cfg)...)
	cmd.Env = append(os.Environ(), "TW_PASSED=passed through", "TW_SECRET=must not leak", "TW_TOKEN=s3cret")
	cmd.Stderr = lg
	c := startRawCmd(t, cmd)
	c.initialize(`{"elicitation":{}}`)

	names, _ := toolsOf(t, c.call("tools/list", map[string]any{}))
	sort.Strings(names)
	for _, want := range []string{"local__echo", "local__env", "local__mutable", "remote__echo", "remote__headers"} {
		if !contains(names, want) {
			t.Errorf("missing %s in %v", want, names)
		}
	}
	for _, hidden := range []string{"local__crash", "local__flaky", "remote__env", "remote__write"} {
		if contains(names, hidden) {
			t.Errorf("filtered tool %s is listed", hidden)
		}
	}
	for _, n := range names {
		if strings.HasPrefix(n, "off__") {
			t.Errorf("disabled server's tool %s is listed", n)
		}
	}

	call := func(name string, args map[string]any) string {
		t.Helper()
		r := decodeCall(t, c.call("tools/call", map[string]any{"name": name, "arguments": args}))
		if r.IsError {
			t.Fatalf("%s: %s", name, r.Text)
		}
		return r.Text
	}
	if got := call("remote__echo", map[string]any{"message": "over http"}); got != "echo: over http" {
		t.Errorf("remote echo: %q", got)
	}
	if got := call("remote__headers", nil); got != "authorization=Bearer s3cret x-test=static" {
		t.Errorf("remote headers: %q", got)
	}
	if got := call("local__env", map[string]any{"name": "TW_PASSED"}); got != "set=true value=passed through cwd="+cwd {
		t.Errorf("env_vars: %q", got)
	}
	if got := call("local__env", map[string]any{"name": "FROM_ENV"}); !strings.HasPrefix(got, "set=true value=set in env") {
		t.Errorf("env: %q", got)
	}
	if got := call("local__env", map[string]any{"name": "TW_SECRET"}); !strings.HasPrefix(got, "set=false") {
		t.Errorf("a variable not named in env_vars leaked: %q", got)
	}
	if got := call("local__env", map[string]any{"name": "PATH"}); !strings.HasPrefix(got, "set=true") {
		t.Errorf("default variable PATH missing: %q", got)
	}
	r := decodeCall(t, c.call("tools/call", map[string]any{"name": "local__crash", "arguments": map[string]any{}}))
	if !r.IsError || !strings.Contains(r.Text, "blocked by app configuration") {
		t.Errorf("disabled_tools call: %+v", r)
	}
}

// startRawCmd is startRaw for a prepared command.
func startRawCmd(t testing.TB, cmd *exec.Cmd) *rawClient {
	t.Helper()
	c := &rawClient{t: t, wait: map[string]chan rawMessage{}, done: make(chan struct{}), log: &testkit.Buffer{}}
	c.cmd = cmd
	var err error
	if c.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go c.read(out)
	t.Cleanup(c.close)
	return c
}

// An upstream that fails to start does not take the others down: its
// tools are simply absent, and the rest serve.
func TestProxyServesWhenOneUpstreamFails(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "proxy.toml", fmt.Sprintf(`
[mcp_servers.good]
command = %q

[mcp_servers.broken]
command = "/nonexistent/mcp-server"
startup_timeout_sec = 2
`, testServer))
	c := startRaw(t, twBin, proxyArgs(t, cfg)...)
	c.initialize("")
	names, _ := toolsOf(t, c.call("tools/list", map[string]any{}))
	if !contains(names, "good__echo") {
		t.Fatalf("good server's tools missing: %v", names)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "broken__") {
			t.Fatalf("broken server listed %s", n)
		}
	}
	r := decodeCall(t, c.call("tools/call", map[string]any{"name": "good__echo", "arguments": map[string]any{"message": "ok"}}))
	if r.IsError || r.Text != "echo: ok" {
		t.Fatalf("%+v", r)
	}
	logged(t, c.log, "broken")
}

// An HTTP upstream's notifications/tools/list_changed (over its GET stream)
// reaches the proxy, which relists and tells the client.
func TestProxyRelistsAnHTTPUpstream(t *testing.T) {
	t.Parallel()
	url := startHTTPTestServer(t)
	cfg := writeFile(t, "proxy.toml", fmt.Sprintf("[mcp_servers.remote]\nurl = %q\n", url))
	ask := answers("allow_session", "allow_session")
	c := startGo(t, false, ask, twBin, proxyArgs(t, cfg)...)
	if out, isErr := c.call(t, "remote__mutable", map[string]any{"x": "1"}); isErr || out != "mutable v0 ran" {
		t.Fatalf("first call: %q", out)
	}
	c.waitTitle(t, "remote__mutable", "Mutable v0")
	c.drainNotes()
	if out, isErr := c.call(t, "remote__flip", nil); isErr {
		t.Fatalf("flip: %q", out)
	}
	c.waitListChanged(t)
	c.waitTitle(t, "remote__mutable", "Mutable v1")
	if out, isErr := c.call(t, "remote__mutable", map[string]any{"x": "2"}); isErr || out != "mutable v1 ran" || ask.count() != 2 {
		t.Fatalf("after drift: %q (asked %d, want 2)", out, ask.count())
	}
}
