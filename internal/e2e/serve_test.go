package e2e

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// coreServe is one `toolwarden serve` the test started.
type coreServe = opsServe

// coreStartServe runs the real binary's serve on a free loopback port with
// a private approvals file and audit log and env added to the environment,
// and waits for its one "listening" line.
func coreStartServe(t *testing.T, env []string, args ...string) *coreServe {
	t.Helper()
	s := launchServe(t, twBin, env, serveTestFlags(t, args)...)
	s.waitListening(t)
	return s
}

// coreEverythingHTTP runs server-everything on streamable HTTP and returns
// its URL. A port picked free may be taken by another test's process before
// server-everything binds it (and a dial would then reach that process), so
// it waits for server-everything's own word that it listens on the port,
// and tries another port when it says the port is in use.
func coreEverythingHTTP(t *testing.T) string {
	t.Helper()
	bin := npmServer(t, "mcp-server-everything")
	for range 5 {
		if url, ok := startEverythingHTTP(t, bin); ok {
			return url
		}
	}
	t.Fatal("server-everything found no free port in 5 tries")
	return ""
}

// startEverythingHTTP starts server-everything on a port that was free a
// moment ago; false when it exited without listening there.
func startEverythingHTTP(t *testing.T, bin string) (string, bool) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	log := newLog(t, "server-everything (http)")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	listening := make(chan bool, 1)
	go func() {
		said := false
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			if !said && strings.Contains(sc.Text(), "listening on port "+port) {
				said = true
				listening <- true
			}
		}
		if !said {
			listening <- false
		}
	}()
	select {
	case ok := <-listening:
		return "http://" + addr + "/mcp", ok
	case <-time.After(30 * time.Second):
		t.Fatalf("server-everything did not say it listens on %s:\n%s", port, log.String())
		return "", false
	}
}

// coreEras are the protocol eras a client of serve may speak.
var coreEras = []struct {
	name    string
	version string
}{
	{"2025-11-25 with a session", mcp.ProtocolVersion20251125},
	{"2026-07-28 stateless", mcp.ProtocolVersion20260728},
}

// coreClient connects mcp-go's streamable HTTP client to url, pinned to
// version, answering elicitations with elicit (nil: no elicitation
// capability), with extra headers on every request.
func coreClient(t *testing.T, url, version string, elicit *scripted, headers map[string]string) *goClient {
	t.Helper()
	topts := []transport.StreamableHTTPCOption{transport.WithHTTPTimeout(60 * time.Second)}
	if headers != nil {
		topts = append(topts, transport.WithHTTPHeaders(headers))
	}
	tr, err := transport.NewStreamableHTTP(url, topts...)
	if err != nil {
		t.Fatal(err)
	}
	opts := []client.ClientOption{client.WithProtocolVersion(version)}
	if elicit != nil {
		opts = append(opts, client.WithElicitationHandler(elicit))
	}
	c := client.NewClient(tr, opts...)
	ctx := testContext(t)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "e2e", Version: "1"},
	}}); err != nil {
		t.Fatalf("initialize (%s): %v", version, err)
	}
	return &goClient{Client: c, notes: make(chan mcp.JSONRPCNotification, 64), log: &testkit.Buffer{}}
}

// coreFilesystemConfig serves server-filesystem over stdio (as fs) and
// server-everything over streamable HTTP (as every): fs's destructive
// tools hidden, its writes asked, reads of secret* denied by argguard.
// Tests that add [serve] keys add them after it.
func coreFilesystemConfig(t *testing.T, dir, everything string) string {
	t.Helper()
	return writeFile(t, "serve.toml", fmt.Sprintf(`
[mcp_servers.fs]
command = %q
args = [%q]

[mcp_servers.every]
url = %q

[apps.fs]
destructive_enabled = false
default_tools_approval_mode = "writes"

[policies.no-secrets]
builtin = "argguard"
apps = ["fs"]
[policies.no-secrets.config]
rules = [{ tool = "*", arg = "path", deny_glob = "**/secret*" }]

# The tests poll tools/list; the rate limit is not what they test.
[serve.rate_limit]
calls_per_second = 1000
burst = 2000
`, npmServer(t, "mcp-server-filesystem"), dir, everything))
}

// coreFSDir is a folder with notes.txt and secret.txt.
func coreFSDir(t *testing.T) string {
	t.Helper()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for name, body := range map[string]string{"notes.txt": "hello from the filesystem\n", "secret.txt": "the secret\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Through serve, in both protocol eras, mcp-go's client sees the tools of
// a stdio server and an HTTP server as <server>__<tool> without the
// hidden ones; an allowed call runs, a denied call and a hidden tool
// called anyway do not, and an ask is put to the human (elicitation on
// the call's stream, or a multi round-trip input request) and decides.
func TestServeDecidesEveryCallOfBothErasInFrontOfRealServers(t *testing.T) {
	t.Parallel()
	dir := coreFSDir(t)
	srv := coreStartServe(t, nil, "--config", coreFilesystemConfig(t, dir, coreEverythingHTTP(t)))
	defer func() {
		if n := strings.Count(srv.log.String(), "toolwarden serve: listening on"); n != 1 {
			t.Errorf("serve said it listens %d times, want once:\n%s", n, srv.log.String())
		}
	}()
	for _, era := range coreEras {
		t.Run(era.name, func(t *testing.T) {
			ask := answers("allow_once", "deny", "allow_session")
			c := coreClient(t, srv.url, era.version, ask, nil)
			var names []string
			eventually(t, 30*time.Second, "both servers' tools", func() bool {
				names = c.toolNames(t)
				return contains(names, "fs__read_text_file") && contains(names, "every__echo")
			})
			for _, hidden := range []string{"fs__write_file", "fs__edit_file", "fs__move_file"} {
				if contains(names, hidden) {
					t.Errorf("hidden tool %s is listed: %v", hidden, names)
				}
			}
			if out, isErr := c.call(t, "every__echo", map[string]any{"message": "over http"}); isErr || !strings.Contains(out, "over http") {
				t.Fatalf("every__echo: %q (error %v)", out, isErr)
			}
			if out, isErr := c.call(t, "fs__read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")}); isErr || !strings.Contains(out, "hello from the filesystem") {
				t.Fatalf("fs__read_text_file: %q (error %v)", out, isErr)
			}
			out, isErr := c.call(t, "fs__read_text_file", map[string]any{"path": filepath.Join(dir, "secret.txt")})
			if !isErr || strings.Contains(out, "the secret") {
				t.Fatalf("a denied read ran: %q (error %v)", out, isErr)
			}
			target := filepath.Join(dir, "written.txt")
			out, isErr = c.call(t, "fs__write_file", map[string]any{"path": target, "content": "x"})
			if !isErr || !strings.Contains(out, "blocked by app configuration") || fileExists(target) {
				t.Fatalf("hidden fs__write_file: %q (error %v, exists %v)", out, isErr, fileExists(target))
			}
			if ask.count() != 0 {
				t.Fatalf("asked %d times before any ask", ask.count())
			}
			made := filepath.Join(dir, "made-"+era.version)
			if out, isErr := c.call(t, "fs__create_directory", map[string]any{"path": made}); isErr || !fileExists(made) {
				t.Fatalf("create_directory allowed once: %q (error %v)", out, isErr)
			}
			if ask.count() != 1 {
				t.Fatalf("asked %d times, want 1", ask.count())
			}
			mustContain(t, ask.last().Params.Message, "fs__create_directory")
			refused := filepath.Join(dir, "refused-"+era.version)
			if out, isErr := c.call(t, "fs__create_directory", map[string]any{"path": refused}); !isErr || fileExists(refused) {
				t.Fatalf("create_directory denied by the human: %q (error %v)", out, isErr)
			}
			// An option the prompt did not offer is refused, in the words
			// of the client's own era.
			unoffered := filepath.Join(dir, "unoffered-"+era.version)
			out, isErr = c.call(t, "fs__create_directory", map[string]any{"path": unoffered})
			if !isErr || fileExists(unoffered) || !strings.Contains(out, "not offered") {
				t.Fatalf("an option not offered: %q (error %v)", out, isErr)
			}
			if era.version != mcp.ProtocolVersion20260728 && strings.Contains(out, "requestState") {
				t.Fatalf("an elicitation client is told about requestState: %q", out)
			}
		})
	}
}

// A client that can elicit neither way gets a deny that says how to
// approve, in both eras, and the call is not made.
func TestServeTellsAClientThatCannotElicitHowToApprove(t *testing.T) {
	t.Parallel()
	dir := coreFSDir(t)
	srv := coreStartServe(t, nil, "--config", coreFilesystemConfig(t, dir, coreEverythingHTTP(t)))
	for _, era := range coreEras {
		t.Run(era.name, func(t *testing.T) {
			c := coreClient(t, srv.url, era.version, nil, nil)
			eventually(t, 30*time.Second, "fs tools", func() bool { return contains(c.toolNames(t), "fs__create_directory") })
			made := filepath.Join(dir, "not-made-"+era.version)
			out, isErr := c.call(t, "fs__create_directory", map[string]any{"path": made})
			if !isErr || fileExists(made) {
				t.Fatalf("an ask ran without approval: %q (error %v)", out, isErr)
			}
			mustContain(t, out, "needs the user's approval")
			mustContain(t, out, "cannot show approval prompts")
		})
	}
}

// approval_channel = "none" holds through serve: an ask is denied at
// once, with the setting named, and nobody is asked, in both eras.
func TestServeHonoursApprovalChannelNone(t *testing.T) {
	t.Parallel()
	dir := coreFSDir(t)
	base, err := os.ReadFile(coreFilesystemConfig(t, dir, coreEverythingHTTP(t)))
	if err != nil {
		t.Fatal(err)
	}
	srv := coreStartServe(t, nil, "--config", writeFile(t, "none.toml", "approval_channel = \"none\"\n"+string(base)))
	for _, era := range coreEras {
		t.Run(era.name, func(t *testing.T) {
			ask := answers("allow_once")
			c := coreClient(t, srv.url, era.version, ask, nil)
			eventually(t, 30*time.Second, "fs tools", func() bool { return contains(c.toolNames(t), "fs__create_directory") })
			made := filepath.Join(dir, "none-"+era.version)
			out, isErr := c.call(t, "fs__create_directory", map[string]any{"path": made})
			if !isErr || fileExists(made) || ask.count() != 0 {
				t.Fatalf("an ask under approval_channel none: %q (error %v, asked %d)", out, isErr, ask.count())
			}
			mustContain(t, out, "no_approval_channel")
		})
	}
}
