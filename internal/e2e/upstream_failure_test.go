package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// An upstream that cannot start is visible to the agent: wrap answers the
// client's initialize with an error that carries the cause and exits
// non-zero; proxy serves the healthy servers and a call to the broken
// one's tools says why. Every wrap here has a startup timeout of ten
// minutes, far past the tests' one-minute contexts: a failure reported
// only when the timeout ran out would fail the test.

// brokenServers are commands that cannot serve MCP, and what the client
// must be told about each.
var brokenServers = []struct {
	name string
	argv []string
	want []string // in the client's error
}{
	{
		name: "a command that is not installed",
		argv: []string{"toolwarden-no-such-command", "--stdio"},
		want: []string{`"toolwarden-no-such-command"`, "not found in PATH"},
	},
	{
		// What npx does for a mistyped package: a 404 on stderr, exit 1.
		name: "a mistyped npx package",
		argv: []string{"node", "-e", "console.error('npm ERR! 404 Not Found - GET https://registry.npmjs.org/@modelcontextprotocol%2fserver-filesystm'); process.exit(1)"},
		want: []string{"exit status 1", "npm ERR! 404 Not Found", "server-filesystm"},
	},
}

func brokenWrapArgs(t testing.TB, argv ...string) []string {
	return append([]string{"wrap", "--approvals", filepath.Join(t.TempDir(), "approvals.json"), "--startup-timeout", "10m", "--app", "broken", "--"}, argv...)
}

func needNode(t testing.TB) {
	t.Helper()
	_, err := exec.LookPath("node")
	testkit.Need(t, "node", err)
}

// The official TypeScript client's connect fails with the cause.
func TestWrapOfABrokenServerFailsTheTypeScriptClientsInitialize(t *testing.T) {
	t.Parallel()
	for _, b := range brokenServers {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			cmd := tsCommand(testContext(t), nodeSDK(t), "", os.Environ(), map[string]any{
				"command": twBin, "args": brokenWrapArgs(t, b.argv...),
				"steps": []tsStep{{Op: "list"}},
				"env":   map[string]string{"XDG_CONFIG_HOME": t.TempDir()},
			})
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("the client's connect did not fail: %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
			}
			// The client's own error, not wrap's log (which shares its
			// stderr): the SDK's McpError for the initialize answer.
			thrown := ""
			for _, l := range strings.Split(errb.String(), "\n") {
				if strings.Contains(l, "MCP error") {
					thrown = l
					break
				}
			}
			if thrown == "" {
				t.Fatalf("no MCP error from the client:\n%s", errb.String())
			}
			for _, w := range b.want {
				mustContain(t, thrown, w)
			}
		})
	}
}

// mcp-go's client gets the cause from Initialize, whether it pins the
// handshake or probes with server/discover first.
func TestWrapOfABrokenServerFailsMcpGosInitialize(t *testing.T) {
	t.Parallel()
	for _, b := range brokenServers {
		for _, legacy := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, legacy=%v", b.name, legacy), func(t *testing.T) {
				t.Parallel()
				if b.argv[0] == "node" {
					needNode(t)
				}
				lg := newLog(t, "wrap")
				tr := transport.NewStdioWithOptions(twBin, nil, brokenWrapArgs(t, b.argv...), transport.WithCommandStderrWriter(lg))
				var opts []client.ClientOption
				if legacy {
					opts = append(opts, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
				}
				c := client.NewClient(tr, opts...)
				ctx := testContext(t)
				if err := c.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				_, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: mcp.Implementation{Name: "e2e", Version: "1"}}})
				if err == nil {
					t.Fatal("initialize succeeded")
				}
				if ctx.Err() != nil {
					t.Fatalf("initialize waited for the startup timeout: %v", err)
				}
				for _, w := range b.want {
					mustContain(t, err.Error(), w)
				}
			})
		}
	}
}

// wrap exits non-zero once it has told the client, without waiting for
// the client to hang up (its stdin stays open here).
func TestWrapOfABrokenServerExitsNonZero(t *testing.T) {
	t.Parallel()
	for _, b := range brokenServers {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			if b.argv[0] == "node" {
				needNode(t)
			}
			cmd := exec.Command(twBin, brokenWrapArgs(t, b.argv...)...)
			cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
			stderr := newLog(t, "wrap")
			cmd.Stderr = stderr
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
			line, err := bufio.NewReader(out).ReadBytes('\n')
			if err != nil {
				t.Fatalf("no answer to initialize: %v", err)
			}
			var m rawMessage
			if err := json.Unmarshal(line, &m); err != nil || m.Error == nil {
				t.Fatalf("initialize was not refused: %s", line)
			}
			for _, w := range b.want {
				mustContain(t, m.Error.Message, w)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-testContext(t).Done():
				_ = cmd.Process.Kill()
				t.Fatal("wrap did not exit after refusing the session")
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("wrap exited with %v, want a non-zero status", err)
			}
			for _, w := range b.want {
				mustContain(t, stderr.String(), w)
			}
		})
	}
}

// proxy keeps serving the servers that started; a call to a tool of one
// that did not gets a tool error that names the cause, its tools are not
// listed, and the audit log records why.
func TestProxyWithABrokenServerServesTheOthersAndSaysWhy(t *testing.T) {
	t.Parallel()
	needNode(t)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := writeFile(t, "proxy.toml", fmt.Sprintf(`
[mcp_servers.good]
command = %q

[mcp_servers.missing]
command = "toolwarden-no-such-command"
startup_timeout_sec = 600

[mcp_servers.mistyped]
command = "node"
args = ["-e", "console.error('npm ERR! 404 Not Found - GET https://registry.npmjs.org/server-filesystm'); process.exit(1)"]
startup_timeout_sec = 600
`, testServer))
	res := runTS(t, false, nil, []tsStep{
		{Op: "list"},
		{Op: "call", Name: "good__echo", Arguments: map[string]any{"message": "ok"}},
		{Op: "call", Name: "missing__read_file", Arguments: map[string]any{"path": "/etc/hostname"}},
		{Op: "call", Name: "mistyped__read_file", Arguments: map[string]any{"path": "/etc/hostname"}},
	}, twBin, append(proxyArgs(t, cfg), "--audit", audit)...)
	if len(res.Results) != 4 {
		t.Fatalf("results: %+v", res.Results)
	}
	tools := res.Results[0].Tools
	if !contains(tools, "good__echo") {
		t.Fatalf("the good server's tools are missing: %v", tools)
	}
	for _, n := range tools {
		if strings.HasPrefix(n, "missing__") || strings.HasPrefix(n, "mistyped__") {
			t.Errorf("a broken server's tool is listed: %s", n)
		}
	}
	if r := res.Results[1]; r.IsError || r.Text != "echo: ok" {
		t.Errorf("good__echo: %+v", r)
	}
	for i, want := range [][]string{
		{"missing__read_file was not called", `"missing" could not start`, `"toolwarden-no-such-command"`, "not found in PATH"},
		{"mistyped__read_file was not called", `"mistyped" could not start`, "exit status 1", "npm ERR! 404 Not Found"},
	} {
		r := res.Results[2+i]
		if !r.IsError {
			t.Errorf("%s: not a tool error: %+v", r.Name, r)
		}
		for _, w := range want {
			mustContain(t, r.Text, w)
		}
	}
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var rec struct {
			Event    string `json:"event"`
			Decision struct {
				Server string `json:"server"`
				Error  string `json:"error"`
			} `json:"decision"`
		}
		if json.Unmarshal(l, &rec) == nil && rec.Event == "upstream" {
			seen[rec.Decision.Server] = rec.Decision.Error
		}
	}
	mustContain(t, seen["missing"], "not found in PATH")
	mustContain(t, seen["mistyped"], "npm ERR! 404 Not Found")
	if _, ok := seen["good"]; ok {
		t.Errorf("the good server is recorded as failed: %v", seen)
	}
}
