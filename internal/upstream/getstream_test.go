package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// httpUpstream serves an mcp-go server with one tool, "a", over streamable
// HTTP; gets counts the GET requests it was sent. refuseGET answers them
// 405, as a server without the standalone stream does.
func httpUpstream(t *testing.T, refuseGET bool) (*server.MCPServer, string, *atomic.Int32) {
	t.Helper()
	srv := server.NewMCPServer("http-test", "1", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("a"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("a ran"), nil
	})
	h := server.NewStreamableHTTPServer(srv)
	gets := &atomic.Int32{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
			if refuseGET {
				http.Error(w, "no GET stream here", http.StatusMethodNotAllowed)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return srv, ts.URL, gets
}

// waitFor polls cond for up to a minute (a generous bound on a loaded
// machine; it measures nothing).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestHTTPUpstreamGetsListChangedWithNoRequestInFlight(t *testing.T) {
	t.Parallel()
	srv, url, gets := httpUpstream(t, false)
	c := New(serverspec.Spec{Name: "h", URL: url, StartupTimeout: time.Minute}, "test", nil)
	defer c.Close()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(c.Tools()); n != 1 {
		t.Fatalf("tools = %d, want 1", n)
	}
	// Only the GET stream is open now: the server's list_changed can
	// arrive nowhere else.
	waitFor(t, "the GET stream to open", func() bool { return gets.Load() > 0 })
	srv.AddTool(mcp.NewTool("b"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("b ran"), nil
	})
	waitFor(t, "the relisted tools", func() bool { return len(c.Tools()) == 2 })
}

func TestHTTPUpstreamWithoutAGETStreamStillServes(t *testing.T) {
	t.Parallel()
	_, url, gets := httpUpstream(t, true)
	c := New(serverspec.Spec{Name: "h", URL: url, StartupTimeout: time.Minute}, "test", nil)
	defer c.Close()
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the GET to be tried", func() bool { return gets.Load() > 0 })
	raw, err := c.Call(context.Background(), "a", nil)
	if err != nil || !strings.Contains(string(raw), "a ran") {
		t.Fatalf("call: %s %v", raw, err)
	}
	if n := gets.Load(); n != 1 {
		t.Errorf("GET was tried %d times after a 405, want once", n)
	}
}

func TestReadSSE(t *testing.T) {
	t.Parallel()
	in := "event: message\ndata: {\"a\":\ndata:  1}\n\n: a comment\nid: 7\ndata: two\r\n\r\nevent: other\ndata: x\n\ndata: unterminated"
	var got []string
	if err := readSSE(strings.NewReader(in), func(event, data string) { got = append(got, event+"="+data) }); err != nil {
		t.Fatal(err)
	}
	want := []string{"message={\"a\":\n 1}", "=two", "other=x"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events = %q, want %q", got, want)
	}
}
