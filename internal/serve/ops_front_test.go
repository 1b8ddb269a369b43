package serve

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
)

// testFront serves inner behind the operations chain Handler builds for
// /mcp (body limit, drain gate, identity from a real tokens file, rate
// limit) on a real listener, and returns the Front and its base URL. The
// tokens are "tok-<name>" for each principal name given.
type testFront struct {
	*Front
	url string
}

type frontSetup struct {
	opts       FrontOptions
	maxBody    int64
	perSecond  float64
	burst      int
	principals []string
	upstreams  func(context.Context) error
}

func startFront(t *testing.T, inner http.Handler, fs frontSetup) *testFront {
	t.Helper()
	if fs.maxBody == 0 {
		fs.maxBody = DefaultMaxRequestBytes
	}
	var auth identity.Authenticator
	if len(fs.principals) > 0 {
		toks := map[string]identity.Principal{}
		for _, p := range fs.principals {
			toks["tok-"+p] = identity.Principal{Name: p}
		}
		a, err := identity.LoadTokens(identitytest.WriteTokens(t, t.TempDir(), toks))
		if err != nil {
			t.Fatal(err)
		}
		auth = a
	}
	f := newFront(fs.upstreams, fs.opts)
	chain := limitBody(fs.maxBody, f.o.ReadTimeout, f.gate(identity.Middleware(auth, "")(limitRate(newRateLimits(fs.perSecond, fs.burst), inner))))
	mux := http.NewServeMux()
	mux.Handle("/mcp", chain)
	mux.HandleFunc("/healthz", healthz)
	mux.Handle("/readyz", readyz(func() []string { return nil }, f.isDraining, nil))
	f.srv.Handler = closeUnread(f.o.ReadTimeout, mux)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- f.Serve(ln) }()
	t.Cleanup(func() {
		_ = f.srv.Close()
		if err := <-served; err != nil && err != http.ErrServerClosed {
			t.Errorf("Serve: %v", err)
		}
	})
	return &testFront{Front: f, url: "http://" + ln.Addr().String()}
}

// post sends one JSON-RPC message to /mcp as principal (no token if "").
func post(t *testing.T, c *http.Client, url, principal, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if principal != "" {
		req.Header.Set("Authorization", "Bearer tok-"+principal)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// echoHandler answers every request 200 with the body it got.
var echoHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
})

// rawConn opens a TCP connection to url's host.
func rawConn(t *testing.T, url string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readResponse reads one HTTP response from c, failing after limit.
func readResponse(t *testing.T, c net.Conn, limit time.Duration) (*http.Response, string, error) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(limit))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b), nil
}

const callBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`
