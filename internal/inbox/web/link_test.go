package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// mint announces the test site and mints an answer link for ask id.
func (s *testSite) mint(t *testing.T, id string) (path, key string) {
	t.Helper()
	if _, err := inbox.Running(s.dir); err != nil {
		remove, err := inbox.Announce(s.dir, "http://"+s.listen)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { remove() })
	}
	link, err := inbox.MintLink(s.dir, id)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(link)
	return u.Path, u.Query().Get("k")
}

func TestAnAnswerLinkAnswersItsAskOnceWithoutTheToken(t *testing.T) {
	s := newTestSite(t, Defaults())
	p := post(t, s.dir, testAsk())
	other := post(t, s.dir, testAsk())
	path, key := s.mint(t, p.ID())

	steps := []struct {
		name string
		r    req
		want int
	}{
		{"the page with the key", req{path: path + "?k=" + key, noCookie: true}, http.StatusOK},
		{"the page with a wrong key", req{path: path + "?k=" + strings.Repeat("0", 64), noCookie: true}, http.StatusForbidden},
		{"the page of another ask with the key", req{path: "/a/" + other.ID() + "?k=" + key, noCookie: true}, http.StatusForbidden},
		{"the ask with the key", req{path: "/api/link/" + p.ID() + "?k=" + key, noCookie: true}, http.StatusOK},
		{"the other ask with the key", req{path: "/api/link/" + other.ID() + "?k=" + key, noCookie: true}, http.StatusForbidden},
		{"the full list with the key", req{path: "/api/asks?k=" + key, noCookie: true}, http.StatusForbidden},
		{"an answer to the other ask with the key", req{path: "/api/link/" + other.ID(), body: `{"k":"` + key + `","option":"allow_once"}`, noCookie: true}, http.StatusForbidden},
		{"an option the ask does not offer", req{path: "/api/link/" + p.ID(), body: `{"k":"` + key + `","option":"always"}`, noCookie: true}, http.StatusBadRequest},
		{"an answer from another site", req{path: "/api/link/" + p.ID(), body: `{"k":"` + key + `","option":"allow_once"}`, noCookie: true, origin: "http://evil.example"}, http.StatusForbidden},
		{"the answer", req{path: "/api/link/" + p.ID(), body: `{"k":"` + key + `","option":"deny"}`, noCookie: true}, http.StatusOK},
		{"the link again", req{path: "/api/link/" + p.ID(), body: `{"k":"` + key + `","option":"allow_once"}`, noCookie: true}, http.StatusForbidden},
		{"the page again", req{path: path + "?k=" + key, noCookie: true}, http.StatusForbidden},
	}
	for _, st := range steps {
		if code, body, _ := s.do(t, st.r); code != st.want {
			t.Errorf("%s: %d %s; want %d", st.name, code, body, st.want)
		}
	}
	ans, err := p.Wait(context.Background())
	if err != nil || ans.Option != "deny" || ans.Channel != LinkChannel {
		t.Errorf("Wait = %+v, %v", ans, err)
	}
	if err := inbox.Respond(s.dir, other.ID(), "deny", "test"); err != nil {
		t.Errorf("the other ask was answered: %v", err)
	}
}

func TestALinkToAWithdrawnAskIsRefused(t *testing.T) {
	s := newTestSite(t, Defaults())
	p := post(t, s.dir, testAsk())
	path, key := s.mint(t, p.ID())
	p.Close()
	if code, _, _ := s.do(t, req{path: path + "?k=" + key, noCookie: true}); code != http.StatusForbidden {
		t.Errorf("page: %d", code)
	}
	if code, _, _ := s.do(t, req{path: "/api/link/" + p.ID(), body: `{"k":"` + key + `","option":"deny"}`, noCookie: true}); code != http.StatusForbidden {
		t.Errorf("answer: %d", code)
	}
}
