package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
)

// counted counts the full checks its Authenticator makes.
type counted struct {
	identity.Authenticator
	n atomic.Int64
}

func (c *counted) Authenticate(r *http.Request) (identity.Principal, error) {
	c.n.Add(1)
	return c.Authenticator.Authenticate(r)
}

func (c *counted) Unwrap() identity.Authenticator { return c.Authenticator }

// authFront is authenticate in front of a handler that answers 200 with
// the principal's name.
func authFront(a identity.Authenticator) http.Handler {
	return limitBody(DefaultMaxRequestBytes, DefaultReadTimeout, authenticate(a, "http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp",
		newRefusalLimits(RefusalsPerSecond, RefusalBurst, maxRefusalAddrs),
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, _ := identity.FromContext(r.Context())
			_, _ = w.Write([]byte(p.Name))
		})))
}

func authPost(h http.Handler, addr, token string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(callBody))
	r.RemoteAddr = addr
	// What a client behind a proxy, or one lying, would send: never read.
	r.Header.Set("X-Forwarded-For", "198.51.100.7")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func tokensFor(t *testing.T, names ...string) identity.Authenticator {
	t.Helper()
	toks := map[string]identity.Principal{}
	for _, n := range names {
		toks["tok-"+n] = identity.Principal{Name: n}
	}
	a, err := identity.LoadTokens(identitytest.WriteTokens(t, t.TempDir(), toks))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAFloodOfRefusedTokensFromOneAddressIs429WithRetryAfterAndIsNoLongerChecked(t *testing.T) {
	t.Parallel()
	a := &counted{Authenticator: tokensFor(t, "alice")}
	h := authFront(a)
	var unauthorized, limited int
	for i := range 500 {
		w := authPost(h, "203.0.113.9:40000", fmt.Sprintf("guess-%d", i))
		switch w.Code {
		case http.StatusUnauthorized:
			unauthorized++
		case http.StatusTooManyRequests:
			limited++
			if ra, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || ra < 1 {
				t.Fatalf("429 with Retry-After %q, want whole seconds", w.Header().Get("Retry-After"))
			}
			if id, code, msg := rpcError(t, w.Body.String()); string(id) != "7" || code != rateLimitCode || !strings.Contains(msg, "too many refused credentials from this address") {
				t.Fatalf("429 body: id %s code %d %q", id, code, msg)
			}
		default:
			t.Fatalf("guess %d: %d %s", i, w.Code, w.Body)
		}
	}
	// The burst, plus what refilled while the loop ran (10 a second).
	if unauthorized < RefusalBurst || unauthorized > RefusalBurst+10 || limited != 500-unauthorized {
		t.Errorf("500 bad tokens: %d refused 401, %d limited 429; want the burst of %d (and a few refilled) refused, the rest limited", unauthorized, limited, RefusalBurst)
	}
	if n := a.n.Load(); n != int64(unauthorized) {
		t.Errorf("%d tokens were checked in full for %d refusals: the limited ones must not be", n, unauthorized)
	}
	// Another port of the same host is the same address.
	if w := authPost(h, "203.0.113.9:40001", "guess-again"); w.Code != http.StatusTooManyRequests {
		t.Errorf("the same host from another port: %d, want 429", w.Code)
	}
}

func TestAGoodTokenIsNeverSlowedByRefusalsFromItsOwnOrAnotherAddress(t *testing.T) {
	t.Parallel()
	h := authFront(tokensFor(t, "alice", "bob"))
	for i := range 100 {
		authPost(h, "203.0.113.9:40000", fmt.Sprintf("guess-%d", i))
	}
	if w := authPost(h, "203.0.113.9:40000", "bad"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("the limit is not in force: %d", w.Code)
	}
	for _, tc := range []struct{ who, addr string }{
		{"alice", "203.0.113.9:40002"}, // behind the same NAT as the flood
		{"bob", "192.0.2.4:5000"},
		{"bob", "[2001:db8::1]:5000"},
	} {
		for range 50 {
			if w := authPost(h, tc.addr, "tok-"+tc.who); w.Code != http.StatusOK || w.Body.String() != tc.who {
				t.Fatalf("%s's good token from %s: %d %s", tc.who, tc.addr, w.Code, w.Body)
			}
		}
	}
	// Another address's bad token is refused as usual, not limited.
	if w := authPost(h, "192.0.2.4:5000", "bad"); w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("a bad token from another address: %d, want 401 with a challenge", w.Code)
	}
	// No token at all costs nothing: still the 401 challenge that starts
	// authorization, even from the flooding address.
	if w := authPost(h, "203.0.113.9:40000", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("no token from the flooding address: %d, want 401", w.Code)
	}
}

func TestAFloodOfForgedJWTsCostsNoSignatureCheckAndAVerifiedTokenStillPasses(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	o, err := identity.NewOIDC(context.Background(), identity.OIDCConfig{Issuer: iss.URL, Audience: "https://mcp.example.com/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	a := &counted{Authenticator: o}
	h := authenticate(a, "", newRefusalLimits(RefusalsPerSecond, RefusalBurst, maxRefusalAddrs),
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	good := iss.Mint(map[string]any{"sub": "carol", "aud": "https://mcp.example.com/mcp"})
	if w := authPost(h, "203.0.113.9:1", good); w.Code != http.StatusOK {
		t.Fatalf("a good JWT: %d %s", w.Code, w.Body)
	}
	forged := iss.MintWith(map[string]any{"sub": "carol", "aud": "https://mcp.example.com/mcp"}, identitytest.Sign{Alg: "HS256", Secret: []byte("guess")})
	before := a.n.Load()
	for range 300 {
		authPost(h, "203.0.113.9:1", forged)
	}
	if n := a.n.Load() - before; n > RefusalBurst+10 {
		t.Errorf("300 forged JWTs from one address were checked %d times, want at most the burst (%d) and a few refilled", n, RefusalBurst)
	}
	if w := authPost(h, "203.0.113.9:1", good); w.Code != http.StatusOK {
		t.Errorf("the JWT already verified, from the flooding address: %d, want 200", w.Code)
	}
}

func TestIdleAddressesAreForgottenAndAFloodFromManyAddressesIsBounded(t *testing.T) {
	t.Parallel()
	l := newRefusalLimits(10, 20, 1000) // full again after 2 s
	t0 := time.Now()
	for i := range 5000 {
		l.refused(fmt.Sprintf("10.0.%d.%d", i/256, i%256), t0)
	}
	if n := l.size(); n != 1000 {
		t.Fatalf("%d addresses tracked, want the bound 1000", n)
	}
	// Past the bound, new addresses share one bucket: 4000 refusals spent it.
	if l.over("10.99.0.1", t0) == 0 {
		t.Error("an address past the bound is not limited by the shared bucket")
	}
	later := t0.Add(3 * time.Second)
	l.refused("10.0.0.1", later)
	if n := l.size(); n != 1 {
		t.Errorf("%d addresses held after the others were idle past their refill time, want 1", n)
	}
	if l.over("10.0.0.2", later) != 0 {
		t.Error("a forgotten address is still limited")
	}
}

func TestTheClientAddressIsThePeersIPAndAnIPv6PeersSlash64(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"203.0.113.9:40000":       "203.0.113.9",
		"[2001:db8:1:2:3::9]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::]:1": "2001:db8:1:2::/64",
		"[::ffff:192.0.2.1]:80":   "192.0.2.1",
		"not-an-address":          "not-an-address",
	} {
		if got := clientAddr(in); got != want {
			t.Errorf("clientAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// What a forged JWT (an attacker's key under a published kid, so the
// signature is checked) costs serve: checked in full, against limited at
// its address.
func BenchmarkAForgedJWTCheckedOrLimited(b *testing.B) {
	iss := identitytest.NewIssuer(b)
	o, err := identity.NewOIDC(context.Background(), identity.OIDCConfig{Issuer: iss.URL, Audience: "https://mcp.example.com/mcp"})
	if err != nil {
		b.Fatal(err)
	}
	forged := iss.MintWith(map[string]any{"sub": "mallory", "aud": "https://mcp.example.com/mcp"},
		identitytest.Sign{Key: iss.NewKey("RS256"), KID: iss.Keys()[0].ID})
	for _, bc := range []struct {
		name  string
		limit *refusalLimits
	}{
		{"checked", newRefusalLimits(1e12, 1<<30, maxRefusalAddrs)},
		{"limited", newRefusalLimits(RefusalsPerSecond, RefusalBurst, maxRefusalAddrs)},
	} {
		h := authenticate(o, "", bc.limit, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		for range RefusalBurst + 1 {
			authPost(h, "203.0.113.9:1", forged)
		}
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if w := authPost(h, "203.0.113.9:1", forged); w.Code == http.StatusOK {
					b.Fatal("a forged JWT was accepted")
				}
			}
		})
	}
}
