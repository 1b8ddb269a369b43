package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// orderedClient speaks raw JSON-RPC to a process and sees every line it
// writes in the order written, requests to the client included.
type orderedClient struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan rawMessage
}

func startOrdered(t *testing.T, cmd *exec.Cmd) *orderedClient {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testkit.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &orderedClient{t: t, in: in, lines: make(chan rawMessage, 64)}
	go func() {
		defer close(c.lines)
		br := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				var m rawMessage
				if json.Unmarshal(line, &m) != nil {
					t.Errorf("not JSON: %q", line)
				}
				m.Line = line
				c.lines <- m
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr.String())
		}
	})
	return c
}

func (c *orderedClient) send(format string, args ...any) {
	c.t.Helper()
	if _, err := fmt.Fprintf(c.in, format+"\n", args...); err != nil {
		c.t.Fatal(err)
	}
}

// next is the next line, or ok false when none came within d.
func (c *orderedClient) next(d time.Duration) (m rawMessage, ok bool) {
	select {
	case m, ok = <-c.lines:
		return m, ok
	case <-time.After(d):
		return rawMessage{}, false
	}
}

// fsWrap is wrap in front of the real server-filesystem serving dir.
func fsWrap(t *testing.T, dir string) *exec.Cmd {
	return exec.Command(twBin, wrapArgs(t, "fs", nil, npmServer(t, "mcp-server-filesystem"), dir)...)
}

// MCP's lifecycle: a server sends no request before the client's
// notifications/initialized. server-filesystem asks for the client's roots
// as soon as it is initialized, and wrap starts it before it answers the
// client's initialize; the question is held until the client says it is
// initialized, then relayed, and the answer reaches the server.
func TestWrapSendsNoRequestBeforeTheClientIsInitialized(t *testing.T) {
	t.Parallel()
	dir, other := t.TempDir(), t.TempDir()
	c := startOrdered(t, fsWrap(t, dir))
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"ordered","version":"1"}}}`)
	for {
		m, ok := c.next(60 * time.Second)
		if !ok {
			t.Fatal("no answer to initialize")
		}
		if m.Method != "" && len(m.ID) > 0 {
			t.Fatalf("request before the initialize response: %s", m.Line)
		}
		if string(m.ID) == "1" {
			break
		}
	}
	// Between the response and notifications/initialized: still nothing.
	// (A wait, as absence can only be watched for; the server asks within
	// milliseconds of its own start, which is long over.)
	if m, ok := c.next(time.Second); ok && m.Method != "" && len(m.ID) > 0 {
		t.Fatalf("request before notifications/initialized: %s", m.Line)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var ask rawMessage
	for {
		m, ok := c.next(30 * time.Second)
		if !ok {
			t.Fatal("server-filesystem's roots/list never arrived after notifications/initialized")
		}
		if m.Method == "roots/list" {
			ask = m
			break
		}
	}
	// The answer reaches the server: its allowed directories become the
	// client's roots.
	uri := "file://" + filepath.ToSlash(other)
	c.send(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[{"uri":%q,"name":"other"}]}}`, ask.ID, uri)
	deadline := time.Now().Add(20 * time.Second)
	for i := 2; ; i++ {
		c.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"list_allowed_directories","arguments":{}}}`, i)
		var r callResult
		for {
			m, ok := c.next(30 * time.Second)
			if !ok {
				t.Fatal("no answer to list_allowed_directories")
			}
			if string(m.ID) == fmt.Sprint(i) {
				r = decodeCall(t, m)
				break
			}
		}
		if strings.Contains(r.Text, filepath.Base(other)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the roots answer did not reach the server: %s", r.Text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// serverInfoOf runs the handshake with wrap in front of cmd's server and
// returns the serverInfo wrap announces.
func serverInfoOf(t *testing.T, cmd *exec.Cmd) map[string]any {
	t.Helper()
	c := startOrdered(t, cmd)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ordered","version":"1"}}}`)
	for {
		m, ok := c.next(60 * time.Second)
		if !ok {
			t.Fatal("no answer to initialize")
		}
		if string(m.ID) != "1" {
			continue
		}
		var r struct {
			ServerInfo map[string]any `json:"serverInfo"`
		}
		if m.Error != nil || json.Unmarshal(m.Result, &r) != nil {
			t.Fatalf("initialize: %s", m.Line)
		}
		return r.ServerInfo
	}
}

// wrap announces the wrapped server's serverInfo (name, version, title),
// so the agent labels the server as the user knows it, not "toolwarden";
// proxy, which serves many servers as one, keeps its own.
func TestWrapAnnouncesTheWrappedServersInfo(t *testing.T) {
	t.Parallel()
	t.Run("TypeScript SDK server with a title", func(t *testing.T) {
		t.Parallel()
		up, env := tsServer(t)
		cmd := exec.Command(twBin, wrapArgs(t, "up", nil, up...)...)
		cmd.Env = env
		got := serverInfoOf(t, cmd)
		if got["name"] != "ts-upstream" || got["version"] != "7.8.9" || got["title"] != "TS Upstream" {
			t.Fatalf("serverInfo = %v, want the upstream's ts-upstream 7.8.9 \"TS Upstream\"", got)
		}
	})
	t.Run("mcp-go server", func(t *testing.T) {
		t.Parallel()
		got := serverInfoOf(t, exec.Command(twBin, wrapArgs(t, "up", nil, testServer, "-state", t.TempDir())...))
		if got["name"] != "testserver" || got["version"] != "1.0.0" {
			t.Fatalf("serverInfo = %v, want the upstream's testserver 1.0.0", got)
		}
	})
	t.Run("proxy keeps its own", func(t *testing.T) {
		t.Parallel()
		cfg := writeFile(t, "proxy.toml", fmt.Sprintf("[mcp_servers.one]\ncommand = %q\nargs = [\"-state\", %q]\n", testServer, t.TempDir()))
		cmd := exec.Command(twBin, proxyArgs(t, cfg)...)
		cmd.Env = os.Environ()
		if got := serverInfoOf(t, cmd); got["name"] != "toolwarden" {
			t.Fatalf("proxy's serverInfo = %v, want toolwarden's", got)
		}
	})
}
