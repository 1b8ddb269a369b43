package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// teamInboxFront is a Server's HTTP front over a real SQLite store, with
// tokens for dana (dev), lena (leads) and mallory (dev); no upstreams: the
// tests post asks to the store as a replica would.
func teamInboxFront(t *testing.T, withStore bool) (*httptest.Server, *store.Store) {
	t.Helper()
	tokens, err := identity.LoadTokens(identitytest.WriteTokens(t, t.TempDir(), map[string]identity.Principal{
		"dana-token":    {Name: "dana", Groups: []string{"dev"}},
		"lena-token":    {Name: "lena", Groups: []string{"leads"}},
		"mallory-token": {Name: "mallory", Groups: []string{"dev"}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	var st *store.Store
	if withStore {
		if st, err = store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "store.db"), store.Options{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
	}
	s := New(testhost.New(t, "", host.Defaults()), nil, Options{Auth: tokens, Store: st})
	front := httptest.NewServer(s.Handler())
	t.Cleanup(front.Close)
	return front, st
}

func postTeamAsk(t *testing.T, st *store.Store, tool, asker string, levels [][]string, expires time.Time) string {
	t.Helper()
	a, err := st.PostAsk(context.Background(), inbox.Ask{Origin: "serve", Server: "deploy", Tool: tool, Arguments: "{}", Expires: expires,
		Options: []inbox.Option{{ID: policy.OptionAllowOnce}, {ID: policy.OptionAlways}, {ID: policy.OptionDeny}}}, asker, levels)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// call sends one request to the front as token ("" none) with a raw body
// ("" none) and returns the status, the body and the headers.
func call(t *testing.T, front *httptest.Server, token, method, path, body string) (int, string, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, front.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := front.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// The answering side refuses every answer that must not count, and says
// why: a caller who is no approver (or, with none named, not the asker),
// an option not offered, a scope beyond the asker without approvers, a
// malformed body, a second answer, an answer to a withdrawn or expired
// ask, no credential. The accepted answer is stored with who gave it.
func TestTheTeamInboxRefusesEveryAnswerThatMustNotCount(t *testing.T) {
	t.Parallel()
	front, st := teamInboxFront(t, true)
	hour := time.Now().Add(time.Hour)
	leads := postTeamAsk(t, st, "deploy_app", "dana", [][]string{{"group:leads"}}, hour)
	own := postTeamAsk(t, st, "status", "dana", nil, hour)
	withdrawn := postTeamAsk(t, st, "rollback", "dana", [][]string{{"group:leads"}}, hour)
	if _, err := st.WithdrawAsk(context.Background(), withdrawn); err != nil {
		t.Fatal(err)
	}
	expiring := postTeamAsk(t, st, "purge", "dana", [][]string{{"group:leads"}}, time.Now().Add(200*time.Millisecond))
	time.Sleep(300 * time.Millisecond)

	for _, tc := range []struct {
		name, token, id, body string
		code                  int
		says                  string
	}{
		{"no credential", "", leads, `{"option":"allow_once"}`, http.StatusUnauthorized, ""},
		{"a wrong credential", "nope", leads, `{"option":"allow_once"}`, http.StatusUnauthorized, ""},
		{"a member who is no approver", "mallory-token", leads, `{"option":"allow_once"}`, http.StatusForbidden, "group:leads"},
		{"the asker who is no approver", "dana-token", leads, `{"option":"allow_once"}`, http.StatusForbidden, "group:leads"},
		{"a lead, when no approvers are named", "lena-token", own, `{"option":"allow_once"}`, http.StatusForbidden, "only the asker"},
		{"the asker granting the team without approvers", "dana-token", own, `{"option":"always","scope":"team"}`, http.StatusBadRequest, "asker's own calls only"},
		{"an option not offered", "lena-token", leads, `{"option":"allow_forever"}`, http.StatusBadRequest, "does not offer"},
		{"a scope on a one-time answer", "lena-token", leads, `{"option":"allow_once","scope":"team"}`, http.StatusBadRequest, "always"},
		{"an empty group", "lena-token", leads, `{"option":"always","scope":"group:"}`, http.StatusBadRequest, "group:NAME"},
		{"a padded group", "lena-token", leads, `{"option":"always","scope":"group: leads"}`, http.StatusBadRequest, "group:NAME"},
		{"an unknown scope", "lena-token", leads, `{"option":"always","scope":"everyone"}`, http.StatusBadRequest, "group:NAME"},
		{"an unknown field", "lena-token", leads, `{"option":"allow_once","by":"root"}`, http.StatusBadRequest, "one JSON object"},
		{"two objects", "lena-token", leads, `{"option":"allow_once"}{"option":"deny"}`, http.StatusBadRequest, "one JSON object"},
		{"an oversized body", "lena-token", leads, `{"option":"allow_once","scope":"` + strings.Repeat("x", 8<<10) + `"}`, http.StatusBadRequest, "one JSON object"},
		{"an unknown ask", "lena-token", strings.Repeat("0", 32), `{"option":"allow_once"}`, http.StatusNotFound, "no such ask"},
		{"a withdrawn ask", "lena-token", withdrawn, `{"option":"allow_once"}`, http.StatusGone, "withdrawn"},
		{"an expired ask", "lena-token", expiring, `{"option":"allow_once"}`, http.StatusGone, "expired"},
		{"the asker answering for themselves without approvers", "dana-token", own, `{"option":"always"}`, http.StatusOK, ""},
		{"a lead granting for a group", "lena-token", leads, `{"option":"always","scope":"group:dev"}`, http.StatusOK, ""},
		{"a second answer", "lena-token", leads, `{"option":"deny"}`, http.StatusConflict, "already answered (always, by lena)"},
	} {
		code, body, hdr := call(t, front, tc.token, http.MethodPost, "/inbox/api/asks/"+tc.id, tc.body)
		if code != tc.code || !strings.Contains(body, tc.says) {
			t.Errorf("%s: %d %s, want %d saying %q", tc.name, code, body, tc.code, tc.says)
		}
		if code != http.StatusUnauthorized && !strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("%s: CSP %q", tc.name, hdr.Get("Content-Security-Policy"))
		}
	}
	got, err := st.GetAsk(context.Background(), leads)
	if err != nil {
		t.Fatal(err)
	}
	if a := got.Answer; a == nil || a.Option != policy.OptionAlways || a.By.Principal != "lena" || a.By.Groups[0] != "leads" ||
		a.Scope != (session.GrantScope{Kind: session.ScopeGroup, Name: "dev"}) {
		t.Fatalf("the stored answer %+v", got.Answer)
	}
	mine, _ := st.GetAsk(context.Background(), own)
	if a := mine.Answer; a == nil || a.By.Principal != "dana" || a.Scope != (session.GrantScope{Kind: session.ScopePrincipal, Name: "dana"}) {
		t.Fatalf("the asker's own answer %+v", mine.Answer)
	}
}

// Each viewer lists only what they may see: an approver the asks they may
// approve, the asker their own (without the right to answer it), anyone
// else nothing; never another's session id.
func TestTheTeamInboxListsToEachViewerOnlyWhatTheyMaySee(t *testing.T) {
	t.Parallel()
	front, st := teamInboxFront(t, true)
	hour := time.Now().Add(time.Hour)
	leads := postTeamAsk(t, st, "deploy_app", "dana", [][]string{{"group:leads"}}, hour)
	own := postTeamAsk(t, st, "status", "dana", nil, hour)
	list := func(token string) map[string]teamAskView {
		code, body, _ := call(t, front, token, http.MethodGet, "/inbox/api/asks", "")
		if code != http.StatusOK {
			t.Fatalf("list as %s: %d %s", token, code, body)
		}
		if strings.Contains(body, "session") {
			t.Errorf("the list as %s names a session: %s", token, body)
		}
		var out struct{ Asks []teamAskView }
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatal(err)
		}
		m := map[string]teamAskView{}
		for _, a := range out.Asks {
			m[a.ID] = a
		}
		return m
	}
	if l := list("lena-token"); len(l) != 1 || !l[leads].MayAnswer || l[leads].Own || l[leads].Asker != "dana" {
		t.Errorf("lena lists %+v, want the leads' ask only, answerable", l)
	}
	if l := list("dana-token"); len(l) != 2 || l[leads].MayAnswer || !l[leads].Own || !l[own].MayAnswer {
		t.Errorf("dana lists %+v, want both of hers, the leads' one not answerable", l)
	}
	if l := list("mallory-token"); len(l) != 0 {
		t.Errorf("mallory lists %+v, want nothing", l)
	}
	if code, _, _ := call(t, front, "", http.MethodGet, "/inbox/api/asks", ""); code != http.StatusUnauthorized {
		t.Errorf("the list without a credential: %d", code)
	}
}

// The page and its assets need no credential and hold no secret; they
// run under a CSP that allows this origin's script and style only. The
// config endpoint says whether a token and a store are needed; without a
// store the API says there is no team inbox.
func TestTheTeamInboxPageIsServedUnderAStrictPolicy(t *testing.T) {
	t.Parallel()
	front, _ := teamInboxFront(t, true)
	for _, path := range []string{"/inbox", "/inbox/static/teaminbox.js", "/inbox/static/teaminbox.css", "/inbox/api/config"} {
		code, body, hdr := call(t, front, "", http.MethodGet, path, "")
		csp := hdr.Get("Content-Security-Policy")
		if code != http.StatusOK || !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") || hdr.Get("Set-Cookie") != "" {
			t.Errorf("GET %s: %d, CSP %q, cookie %q", path, code, csp, hdr.Get("Set-Cookie"))
		}
		if path == "/inbox/api/config" && body != `{"auth":true,"store":true}` {
			t.Errorf("config %s", body)
		}
	}
	bare, _ := teamInboxFront(t, false)
	if code, body, _ := call(t, bare, "lena-token", http.MethodGet, "/inbox/api/asks", ""); code != http.StatusNotFound || !strings.Contains(body, "--store") {
		t.Errorf("the API without a store: %d %s", code, body)
	}
}

// The API limits each principal's calls as [serve.rate_limit] limits
// their /mcp requests, in buckets of their own: one principal polling
// hard is refused with 429 and Retry-After, another is not.
func TestTheTeamInboxAPILimitsEachPrincipal(t *testing.T) {
	t.Parallel()
	tokens, err := identity.LoadTokens(identitytest.WriteTokens(t, t.TempDir(), map[string]identity.Principal{
		"lena-token": {Name: "lena", Groups: []string{"leads"}}, "leo-token": {Name: "leo", Groups: []string{"leads"}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "store.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := New(testhost.New(t, "", host.Defaults()), nil, Options{Auth: tokens, Store: st, RatePerSecond: 0.01, RateBurst: 2})
	front := httptest.NewServer(s.Handler())
	t.Cleanup(front.Close)
	for i := range 2 {
		if code, body, _ := call(t, front, "lena-token", http.MethodGet, "/inbox/api/asks", ""); code != http.StatusOK {
			t.Fatalf("lena's call %d: %d %s", i, code, body)
		}
	}
	code, body, hdr := call(t, front, "lena-token", http.MethodGet, "/inbox/api/asks", "")
	if code != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" || !strings.Contains(body, "rate_limit") {
		t.Errorf("lena's third call: %d %s (Retry-After %q)", code, body, hdr.Get("Retry-After"))
	}
	if code, _, _ := call(t, front, "leo-token", http.MethodGet, "/inbox/api/asks", ""); code != http.StatusOK {
		t.Errorf("leo's call beside lena's: %d", code)
	}
}
