package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/session"
)

// testSite is the page served by an httptest server, as toolwarden inbox
// serves it.
type testSite struct {
	srv    *Server
	ts     *httptest.Server
	dir    string
	listen string
	cookie *http.Cookie
}

func rendezvous(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rv")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func newTestSite(t *testing.T, opts Options) *testSite {
	t.Helper()
	dir := rendezvous(t)
	srv, err := New(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	listen := ts.Listener.Addr().String()
	ts.Config.Handler = srv.Handler(listen)
	ts.Start()
	t.Cleanup(func() { srv.Close(); ts.Close() })
	s := &testSite{srv: srv, ts: ts, dir: dir, listen: listen}
	s.cookie = s.login(t)
	return s
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (s *testSite) login(t *testing.T) *http.Cookie {
	t.Helper()
	resp, err := noRedirect.Get(s.srv.URL(s.listen))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == cookieName(s.listen) {
			return c
		}
	}
	t.Fatalf("no cookie from the token URL (status %d)", resp.StatusCode)
	return nil
}

// req is one request to the site: by default as the page makes it (its
// Host, its Origin, its cookie, JSON).
type req struct {
	method, path, body string
	host, origin       string
	site               string // Sec-Fetch-Site
	contentType        string
	noCookie           bool
}

func (s *testSite) do(t *testing.T, r req) (int, string, http.Header) {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
		if r.body != "" {
			r.method = http.MethodPost
		}
	}
	hr, err := http.NewRequest(r.method, s.ts.URL+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Host = s.listen
	if r.host != "" {
		hr.Host = r.host
	}
	origin := "http://" + s.listen
	if r.origin != "" {
		origin = r.origin
	}
	if r.method == http.MethodPost && origin != "-" {
		hr.Header.Set("Origin", origin)
	}
	ct := "application/json"
	if r.contentType != "" {
		ct = r.contentType
	}
	if r.body != "" {
		hr.Header.Set("Content-Type", ct)
	}
	if r.site != "" {
		hr.Header.Set("Sec-Fetch-Site", r.site)
	}
	if !r.noCookie {
		hr.AddCookie(s.cookie)
	}
	resp, err := noRedirect.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func testAsk() inbox.Ask {
	return inbox.Ask{
		Origin: "wrap", Session: "s1", Server: "fs", Tool: "write_file",
		Arguments: `{"path": "/tmp/x"}`,
		Options:   []inbox.Option{{ID: "allow_once", Title: "Allow once"}, {ID: "deny", Title: "Deny"}},
		Expires:   time.Now().Add(time.Hour),
	}
}

func post(t *testing.T, dir string, a inbox.Ask) *inbox.Pending {
	t.Helper()
	p, err := inbox.Post(dir, a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"127.0.0.1:8080", true},
		{"127.1.2.3:80", true},
		{"[::1]:0", true},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{":8080", false},
		{"localhost:8080", false},
		{"192.168.1.10:8080", false},
		{"example.com:80", false},
		{"127.0.0.1", false},
	}
	for _, tt := range tests {
		err := CheckLoopback(tt.addr)
		if (err == nil) != tt.ok {
			t.Errorf("CheckLoopback(%q) = %v; want ok=%v", tt.addr, err, tt.ok)
		}
	}
}

func TestTheTokenOpensThePageOnceAndLeavesTheAddressBar(t *testing.T) {
	s := newTestSite(t, Defaults())
	resp, err := noRedirect.Get(s.srv.URL(s.listen))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Errorf("token URL: %d to %q; want a redirect to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	c := s.cookie
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Errorf("cookie %+v; want HttpOnly, SameSite=Strict, Path=/", c)
	}
	if code, body, _ := s.do(t, req{path: "/"}); code != http.StatusOK || !strings.Contains(body, "toolwarden inbox") {
		t.Errorf("the page with the cookie: %d", code)
	}
}

func TestRequestsWithoutTheTokenAreRefused(t *testing.T) {
	s := newTestSite(t, Defaults())
	p := post(t, s.dir, testAsk())
	tests := []struct {
		name string
		r    req
	}{
		{"the page", req{path: "/", noCookie: true}},
		{"the page with a wrong token", req{path: "/?t=" + strings.Repeat("0", 64), noCookie: true}},
		{"the asks", req{path: "/api/asks", noCookie: true}},
		{"the live stream", req{path: "/api/events", noCookie: true}},
		{"the approvals", req{path: "/api/approvals", noCookie: true}},
		{"the decisions", req{path: "/api/decisions", noCookie: true}},
		{"an answer", req{path: "/api/asks/" + p.ID(), body: `{"option":"allow_once"}`, noCookie: true}},
		{"a revoke", req{path: "/api/approvals/revoke", body: `{}`, noCookie: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, _, _ := s.do(t, tt.r); code != http.StatusForbidden {
				t.Errorf("status %d; want 403", code)
			}
		})
	}
	if _, err := inbox.Get(s.dir, p.ID()); err != nil {
		t.Fatalf("the ask is gone: %v", err)
	}
	if err := inbox.Respond(s.dir, p.ID(), "deny", "test"); err != nil {
		t.Errorf("the ask was answered by a refused request: %v", err)
	}
}

func TestRequestsFromElsewhereAreRefused(t *testing.T) {
	s := newTestSite(t, Defaults())
	p := post(t, s.dir, testAsk())
	_, port, _ := strings.Cut(s.listen, ":")
	answer := "/api/asks/" + p.ID()
	tests := []struct {
		name string
		r    req
		want int
	}{
		{"a DNS-rebinding Host on the page", req{path: "/", host: "evil.example:" + port}, http.StatusMisdirectedRequest},
		{"a DNS-rebinding Host on the API", req{path: "/api/asks", host: "evil.example:" + port}, http.StatusMisdirectedRequest},
		{"a Host on another port", req{path: "/api/asks", host: "127.0.0.1:1"}, http.StatusMisdirectedRequest},
		{"an answer from another site", req{path: answer, body: `{"option":"allow_once"}`, origin: "http://evil.example"}, http.StatusForbidden},
		{"an answer from another port of this machine", req{path: answer, body: `{"option":"allow_once"}`, origin: "http://127.0.0.1:1"}, http.StatusForbidden},
		{"an answer without Origin", req{path: answer, body: `{"option":"allow_once"}`, origin: "-"}, http.StatusForbidden},
		{"an answer marked same-site by the browser", req{path: answer, body: `{"option":"allow_once"}`, site: "same-site"}, http.StatusForbidden},
		{"a read marked cross-site by the browser", req{path: "/api/asks", site: "cross-site"}, http.StatusForbidden},
		{"an answer sent as a form", req{path: answer, body: `{"option":"allow_once"}`, contentType: "text/plain"}, http.StatusUnsupportedMediaType},
		{"an answer with a DNS-rebinding Host", req{path: answer, body: `{"option":"allow_once"}`, host: "evil.example:" + port, origin: "http://evil.example:" + port}, http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, h := s.do(t, tt.r)
			if code != tt.want {
				t.Errorf("status %d; want %d", code, tt.want)
			}
			if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'self'") {
				t.Errorf("no Content-Security-Policy on the refusal")
			}
		})
	}
	if err := inbox.Respond(s.dir, p.ID(), "deny", "test"); err != nil {
		t.Errorf("the ask was answered by a refused request: %v", err)
	}
}

func TestLocalhostOnTheSamePortIsAccepted(t *testing.T) {
	s := newTestSite(t, Defaults())
	_, port, _ := strings.Cut(s.listen, ":")
	host := "localhost:" + port
	if code, _, _ := s.do(t, req{path: "/api/asks", host: host}); code != http.StatusOK {
		t.Errorf("GET with Host %s: %d", host, code)
	}
	p := post(t, s.dir, testAsk())
	if code, body, _ := s.do(t, req{path: "/api/asks/" + p.ID(), body: `{"option":"deny"}`, host: host, origin: "http://" + host}); code != http.StatusOK {
		t.Errorf("POST with Host %s: %d %s", host, code, body)
	}
}

func TestEveryResponseCarriesTheSecurityHeaders(t *testing.T) {
	s := newTestSite(t, Defaults())
	for _, path := range []string{"/", "/static/app.js", "/static/chart.js", "/static/app.css", "/api/asks", "/api/info", "/nope"} {
		_, _, h := s.do(t, req{path: path})
		for k, want := range map[string]string{
			"Content-Security-Policy":      "default-src 'self'",
			"X-Content-Type-Options":       "nosniff",
			"X-Frame-Options":              "DENY",
			"Referrer-Policy":              "no-referrer",
			"Cross-Origin-Resource-Policy": "same-origin",
		} {
			if !strings.Contains(h.Get(k), want) {
				t.Errorf("%s: %s = %q; want %q", path, k, h.Get(k), want)
			}
		}
	}
}

func TestThePageLoadsNothingFromElsewhere(t *testing.T) {
	for _, name := range []string{"index.html", "app.js", "chart.js", "app.css"} {
		b, err := assets.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, bad := range []string{"http://", "https://", "//cdn", "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "style=\""} {
			if name == "chart.js" && bad == "http://" && strings.Count(s, "http://") == 1 && strings.Contains(s, `"http://www.w3.org/2000/svg"`) {
				continue // the SVG namespace, not a fetch
			}
			if strings.Contains(s, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
}

func TestStaticFiles(t *testing.T) {
	s := newTestSite(t, Defaults())
	for path, ct := range map[string]string{"/static/app.js": "text/javascript", "/static/chart.js": "text/javascript", "/static/app.css": "text/css"} {
		code, _, h := s.do(t, req{path: path, noCookie: true})
		if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), ct) {
			t.Errorf("%s: %d %s", path, code, h.Get("Content-Type"))
		}
	}
	if code, _, _ := s.do(t, req{path: "/static/index.html"}); code != http.StatusNotFound {
		t.Errorf("/static/index.html: %d", code)
	}
}

func TestAnsweringFromThePage(t *testing.T) {
	s := newTestSite(t, Defaults())
	p := post(t, s.dir, testAsk())
	expired := testAsk()
	expired.Expires = time.Now().Add(-time.Second)
	old := post(t, s.dir, expired)

	code, body, _ := s.do(t, req{path: "/api/asks"})
	var l askList
	if err := json.Unmarshal([]byte(body), &l); code != http.StatusOK || err != nil || len(l.Asks) != 1 || l.Asks[0].ID != p.ID() {
		t.Fatalf("GET /api/asks: %d %s", code, body)
	}
	tests := []struct {
		name, id, body string
		want           int
	}{
		{"an option the ask does not offer", p.ID(), `{"option":"always"}`, http.StatusBadRequest},
		{"an unknown ask", strings.Repeat("a", 32), `{"option":"deny"}`, http.StatusNotFound},
		{"an expired ask", old.ID(), `{"option":"deny"}`, http.StatusGone},
		{"a body that is not an answer", p.ID(), `{"option":"deny","extra":1}`, http.StatusBadRequest},
		{"the first answer", p.ID(), `{"option":"allow_once"}`, http.StatusOK},
		{"a second answer", p.ID(), `{"option":"deny"}`, http.StatusConflict},
	}
	for _, tt := range tests {
		if code, body, _ := s.do(t, req{path: "/api/asks/" + tt.id, body: tt.body}); code != tt.want {
			t.Errorf("%s: %d %s; want %d", tt.name, code, body, tt.want)
		}
	}
	ans, err := p.Wait(context.Background())
	if err != nil || ans.Option != "allow_once" || ans.Channel != Channel {
		t.Errorf("Wait = %+v, %v", ans, err)
	}
}

func TestInfoSaysWhatThePageShows(t *testing.T) {
	file := filepath.Join(t.TempDir(), "approvals.json")
	p, _ := session.OpenPersistent(file)
	s := newTestSite(t, Defaults().WithApprovals(p).WithAudit("/x/audit.jsonl").WithNote("hello"))
	_, body, _ := s.do(t, req{path: "/api/info"})
	var info struct {
		Dir, Approvals, Audit string
		Notes                 []string
	}
	json.Unmarshal([]byte(body), &info)
	if info.Dir != s.dir || info.Approvals != file || info.Audit != "/x/audit.jsonl" || len(info.Notes) != 1 {
		t.Errorf("info %s", body)
	}
}

func TestNewRefusesAnUnsafeDirectory(t *testing.T) {
	dir := rendezvous(t)
	os.Chmod(dir, 0o755)
	if _, err := New(dir, Defaults()); err == nil {
		t.Error("New accepted a world-readable rendezvous directory")
	}
}

func TestWithNoteLeavesTheOriginalOptionsAlone(t *testing.T) {
	a := Defaults().WithNote("one")
	b := a.WithNote("two")
	c := a.WithNote("three")
	if len(a.notes) != 1 || b.notes[1] != "two" || c.notes[1] != "three" {
		t.Errorf("options share their notes: %v %v %v", a.notes, b.notes, c.notes)
	}
}
