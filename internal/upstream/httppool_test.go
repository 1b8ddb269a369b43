package upstream

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// Many calls in flight to one HTTP upstream reuse their connections from
// one round of calls to the next, instead of dialling one per call (Go's
// default transport keeps only two idle connections per host).
func TestConcurrentCallsToAnHTTPUpstreamReuseTheirConnections(t *testing.T) {
	t.Parallel()
	srv := server.NewMCPServer("pool-test", "1", server.WithToolCapabilities(true))
	srv.AddTool(mcp.NewTool("slow"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		time.Sleep(20 * time.Millisecond) // so that the calls of a round overlap
		return mcp.NewToolResultText("ok"), nil
	})
	ts := httptest.NewUnstartedServer(server.NewStreamableHTTPServer(srv))
	var dials atomic.Int32
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	c := New(serverspec.Spec{Name: "pool", URL: ts.URL}, "test", nil)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	const inFlight, rounds = 32, 4
	for range rounds {
		var wg sync.WaitGroup
		for range inFlight {
			wg.Go(func() {
				if _, err := c.Call(ctx, "slow", []byte(`{}`)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	// The first round may open one connection per call (and the start a
	// few); the later rounds find them idle.
	if n := dials.Load(); n > inFlight+8 {
		t.Fatalf("%d calls (%d at a time) opened %d connections", inFlight*rounds, inFlight, n)
	}
}
