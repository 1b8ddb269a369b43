package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/store/pgtest"
	"github.com/toolwarden/toolwarden/sdk"
	"github.com/toolwarden/toolwarden/sdk/store"
)

// These tests use the store as a program outside this module would: only
// host, sdk and sdk/store (pgtest merely provides a real Postgres).

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// engines gives each test a fresh store URL per engine; Postgres skips
// when it is not installed, and fails under TOOLWARDEN_REQUIRE_TOOLCHAINS=1.
var engines = []struct {
	name string
	url  func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "store.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.Shared(t).URL }},
}

func TestTwoGuardsOnOneStoreOpenedThroughThePublicAPIShareAnAlwaysAndSeeARevokeOnTheNextCall(t *testing.T) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			url := e.url(t)
			// Two handles on one database, as two processes would hold.
			stA, stB := open(t, url), open(t, url)
			if stA.Engine() != e.name {
				t.Fatalf("Engine() = %q, want %q", stA.Engine(), e.name)
			}
			srv := newWriter()
			askA, askB := &counter{answer: sdk.AllowAlways}, &counter{answer: sdk.Deny}
			a := sdk.New(newHost(t, stA), sdk.WithApprover(askA)).Client("files", srv.connect(t))
			b := sdk.New(newHost(t, stB), sdk.WithApprover(askB)).Client("files", srv.connect(t))

			if out, isErr := write(t, a, "/a"); isErr || askA.n() != 1 {
				t.Fatalf("A answered always: %q (error %v, asked %d times, want 1)", out, isErr, askA.n())
			}
			if out, isErr := write(t, b, "/b"); isErr || askB.n() != 0 {
				t.Fatalf("B's call after A's always: %q (error %v, B asked %d times, want 0: the grant is shared)", out, isErr, askB.n())
			}
			n, err := stA.Revoke(context.Background(), "files", "write_file", "test")
			if err != nil || n != 1 {
				t.Fatalf("Revoke: %d, %v (want 1 grant revoked)", n, err)
			}
			if out, isErr := write(t, b, "/c"); !isErr || askB.n() != 1 {
				t.Fatalf("B's next call after the revoke: %q (error %v, asked %d times, want asked once and denied)", out, isErr, askB.n())
			}
			if got := srv.ran(); strings.Join(got, ",") != "/a,/b" {
				t.Fatalf("writes that reached the server: %v, want /a and /b only", got)
			}
		})
	}
}

// A guard's refusal tells the user how to approve the call for good: with
// a store, in the store, with the scope its own "always" would have had
// (local: the guard has no caller), never in an approvals file the host
// does not read.
func TestAGuardOnAStoreAdvisesApprovingInThatStore(t *testing.T) {
	url := "sqlite:" + filepath.Join(t.TempDir(), "store.db")
	g := sdk.New(newHost(t, open(t, url)), sdk.WithApprover(sdk.DenyAll)).Client("files", newWriter().connect(t))
	out, isErr := write(t, g, "/a")
	want := "toolwarden approvals add --store " + url + " --scope local --server files --tool write_file --hash "
	if !isErr || !strings.Contains(out, want) || strings.Contains(out, "--approvals") {
		t.Fatalf("the refusal (error %v):\n%s\nwant it to advise %q and name no approvals file", isErr, out, want)
	}
}

func TestOpenRefusesABadURLAndHidesItsPassword(t *testing.T) {
	cases := []struct{ name, url, want string }{
		{"an unknown scheme", "mysql://u:hunter2@db/x", "store"},
		{"a Postgres server that is not there", "postgres://u:hunter2@127.0.0.1:1/x?connect_timeout=2", "127.0.0.1:1"},
		{"a file that is not a SQLite database", "sqlite:" + notADatabase(t), "store.db"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, err := store.Open(context.Background(), c.url)
			if err == nil {
				st.Close()
				t.Fatalf("Open(%q) = nil error, want a refusal", c.url)
			}
			msg := err.Error()
			if strings.Contains(msg, "hunter2") || !strings.Contains(msg, c.want) || !strings.Contains(msg, "the shared store did not open") {
				t.Fatalf("Open(%q): %v\nwant the place (%q) named, no password, and what failed", c.url, err, c.want)
			}
		})
	}
}

// notADatabase is the path of a file that is not a SQLite database.
func notADatabase(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "store.db")
	if err := os.WriteFile(p, []byte(strings.Repeat("not a database\n", 512)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func open(t *testing.T, url string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return st
}

// newHost builds a host on the default config with st as its store; it is
// closed before st (cleanups run last-registered first).
func newHost(t *testing.T, st *store.Store) *host.Host {
	t.Helper()
	cfg, err := host.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(context.Background(), cfg, host.Defaults().WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// counter is an Approver that gives one answer and counts the questions.
type counter struct {
	answer sdk.Answer
	mu     sync.Mutex
	asked  int
}

func (c *counter) Approve(ctx context.Context, q *sdk.Question) (sdk.Answer, error) {
	c.mu.Lock()
	c.asked++
	c.mu.Unlock()
	return c.answer, nil
}

func (c *counter) n() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asked
}

// writer is an in-process MCP server with one tool, write_file, that
// declares no hints (so the default policy asks) and records each path.
type writer struct {
	srv   *server.MCPServer
	mu    sync.Mutex
	paths []string
}

func newWriter() *writer {
	w := &writer{srv: server.NewMCPServer("files", "1.0.0", server.WithToolCapabilities(true))}
	w.srv.AddTool(mcp.NewTool("write_file", mcp.WithDescription("Write a file."), mcp.WithString("path", mcp.Required())),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			w.mu.Lock()
			w.paths = append(w.paths, r.GetString("path", ""))
			w.mu.Unlock()
			return mcp.NewToolResultText("written"), nil
		})
	return w
}

func (w *writer) ran() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.paths...)
}

func (w *writer) connect(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(w.srv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "agent", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t *testing.T, c sdk.MCPClient, path string) (string, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = "write_file"
	req.Params.Arguments = map[string]any{"path": path}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("write_file %s: %v", path, err)
	}
	var parts []string
	for _, x := range res.Content {
		if tc, ok := x.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}
