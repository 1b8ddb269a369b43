package identity_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
)

const audience = "http://127.0.0.1:8080/mcp"

func newOIDC(t *testing.T, iss *identitytest.Issuer, mod func(*identity.OIDCConfig)) *identity.OIDC {
	t.Helper()
	cfg := identity.OIDCConfig{Issuer: iss.URL, Audience: audience}
	if mod != nil {
		mod(&cfg)
	}
	o, err := identity.NewOIDC(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func bearer(token string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

// publicKeyPEM is the issuer's RSA public key as a server would hold it:
// the secret an HS256 key-confusion forgery signs with.
func publicKeyPEM(t *testing.T, k *identitytest.Key) []byte {
	der, err := x509.MarshalPKIXPublicKey(k.Signer.Public())
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func TestAnOIDCTokenFromTheIssuerForThisAudienceNamesItsPrincipalAndGroups(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	o := newOIDC(t, iss, nil)
	ec := iss.Keys()[1]
	for name, tok := range map[string]string{
		"RS256":              iss.Mint(map[string]any{"sub": "alice", "aud": audience, "groups": []string{"dev", "ops"}}),
		"ES256":              iss.MintWith(map[string]any{"sub": "alice", "aud": audience, "groups": []string{"dev", "ops"}}, identitytest.Sign{Key: ec}),
		"audience in a list": iss.Mint(map[string]any{"sub": "alice", "aud": []string{"other", audience}, "groups": []string{"dev", "ops"}}),
	} {
		p, err := o.Authenticate(bearer(tok))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Name != "alice" || strings.Join(p.Groups, ",") != "dev,ops" || p.Via != "oidc" {
			t.Errorf("%s: principal = %+v", name, p)
		}
	}
}

func TestPrincipalAndGroupsComeFromTheConfiguredClaims(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	o := newOIDC(t, iss, func(c *identity.OIDCConfig) { c.PrincipalClaim, c.GroupsClaim = "email", "roles" })
	p, err := o.Authenticate(bearer(iss.Mint(map[string]any{"sub": "u-1", "email": "alice@example.com", "aud": audience, "roles": []string{"admin"}, "groups": []string{"ignored"}})))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "alice@example.com" || strings.Join(p.Groups, ",") != "admin" {
		t.Errorf("principal = %+v", p)
	}
}

// Every forgery and misuse an attacker can send must be refused with a
// description that says which check failed and never quotes the token.
func TestAnAttackersTokensAreRefused(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	o := newOIDC(t, iss, nil)
	rsaKey := iss.Keys()[0]
	attacker := iss.NewKey("RS256")
	now := time.Now()
	ok := map[string]any{"sub": "mallory", "aud": audience}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range ok {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	cases := []struct {
		name, token, want string
	}{
		{"a token for another audience", iss.Mint(with(map[string]any{"aud": "https://other.example/mcp"})), "another audience"},
		{"a token with no audience", iss.Mint(map[string]any{"sub": "mallory"}), "another audience"},
		{"a token from another issuer", iss.Mint(with(map[string]any{"iss": "https://evil.example"})), "another issuer"},
		{"an expired token", iss.Mint(with(map[string]any{"exp": now.Add(-time.Minute).Unix()})), "expired"},
		{"a token without exp", iss.MintWith(with(map[string]any{"iss": iss.URL}), identitytest.Sign{Key: rsaKey, Bare: true}), "expired"},
		{"a token not valid yet", iss.Mint(with(map[string]any{"nbf": now.Add(time.Hour).Unix()})), "not valid yet"},
		{"an unsigned token (alg none)", iss.MintWith(ok, identitytest.Sign{Alg: "none", KID: rsaKey.ID}), "algorithm is not accepted"},
		{"HS256 signed with the issuer's public key", iss.MintWith(ok, identitytest.Sign{Alg: "HS256", KID: rsaKey.ID, Secret: publicKeyPEM(t, rsaKey)}), "algorithm is not accepted"},
		{"a token signed by an unknown key", iss.MintWith(ok, identitytest.Sign{Key: attacker}), "does not verify"},
		{"a token signed by another key under the issuer's kid", iss.MintWith(ok, identitytest.Sign{Key: attacker, KID: rsaKey.ID}), "does not verify"},
		{"a token with no kid signed by another key", iss.MintWith(ok, identitytest.Sign{Key: attacker, KID: "-"}), "does not verify"},
		{"a groups claim that is a string", iss.Mint(with(map[string]any{"groups": "admins"})), "not an array of strings"},
		{"a groups claim that is an object", iss.Mint(with(map[string]any{"groups": map[string]any{"admins": true}})), "not an array of strings"},
		{"a groups claim with a number", iss.Mint(with(map[string]any{"groups": []any{"dev", 7}})), "not an array of strings"},
		{"a token without a subject", iss.Mint(map[string]any{"aud": audience}), "sub claim is not a usable principal"},
		{"a subject that is not a string", iss.Mint(with(map[string]any{"sub": 42})), "standard types"},
		{"a subject that reads as a group", iss.Mint(with(map[string]any{"sub": "group:admins"})), "sub claim is not a usable principal"},
		{"an oversized token", iss.Mint(with(map[string]any{"pad": strings.Repeat("a", identity.MaxTokenBytes)})), "longer than"},
		{"a token that is not a JWT", "opaque-token-value", "not a JWT"},
		{"a JWT with a tampered payload", tamper(iss.Mint(ok)), "does not verify"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := o.Authenticate(bearer(c.token))
			if err == nil {
				t.Fatalf("accepted as %+v", p)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %q, want it to say %q", err, c.want)
			}
			if strings.Contains(err.Error(), c.token) {
				t.Errorf("error quotes the token")
			}
		})
	}
}

// tamper swaps the payload of a signed token for one naming another
// subject, keeping the header and signature.
func tamper(tok string) string {
	parts := strings.Split(tok, ".")
	parts[1] = "eyJzdWIiOiJhZG1pbiIsImF1ZCI6Imh0dHA6Ly8xMjcuMC4wLjE6ODA4MC9tY3AifQ"
	return strings.Join(parts, ".")
}

func TestATokenSignedWithARotatedKeyIsAcceptedAfterOneRefetch(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	o := newOIDC(t, iss, nil)
	before := iss.JWKSFetches()
	iss.Rotate()
	if _, err := o.Authenticate(bearer(iss.Mint(map[string]any{"sub": "alice", "aud": audience}))); err != nil {
		t.Fatalf("token signed with the new key: %v", err)
	}
	if got := iss.JWKSFetches() - before; got != 1 {
		t.Errorf("key set fetched %d times for one rotation, want 1", got)
	}
	if _, err := o.Authenticate(bearer(iss.Mint(map[string]any{"sub": "alice", "aud": audience}))); err != nil || iss.JWKSFetches()-before != 1 {
		t.Errorf("second token: err %v, fetches %d: the new key should be cached", err, iss.JWKSFetches()-before)
	}
}

func TestARetiredKeyStopsVerifyingOnceTheKeySetIsRefetched(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	o := newOIDC(t, iss, nil)
	identity.SetRefetch(o, 0)
	old := iss.Keys()[0]
	iss.Rotate()
	iss.Retire(old.ID)
	// A token of the new key makes serve refetch; the old key is gone then.
	if _, err := o.Authenticate(bearer(iss.Mint(map[string]any{"sub": "alice", "aud": audience}))); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Authenticate(bearer(iss.MintWith(map[string]any{"sub": "alice", "aud": audience}, identitytest.Sign{Key: old}))); err == nil {
		t.Fatal("a token of the retired key was accepted")
	}
}

func TestForgedKidsCannotMakeServeFetchTheKeySetOnEveryRequest(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	o := newOIDC(t, iss, nil)
	attacker := iss.NewKey("RS256")
	before := iss.JWKSFetches()
	for i := range 50 {
		tok := iss.MintWith(map[string]any{"sub": "m", "aud": audience}, identitytest.Sign{Key: attacker, KID: "forged-" + string(rune('a'+i%26))})
		if _, err := o.Authenticate(bearer(tok)); err == nil {
			t.Fatal("forged token accepted")
		}
	}
	if got := iss.JWKSFetches() - before; got > 1 {
		t.Errorf("50 forged tokens fetched the key set %d times, want at most 1 per refetch interval", got)
	}
}

func TestAKeySetURLSkipsDiscovery(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	o := newOIDC(t, iss, func(c *identity.OIDCConfig) { c.Issuer, c.JWKSURL = "https://idp.example", iss.JWKSURL() })
	if _, err := o.Authenticate(bearer(iss.Mint(map[string]any{"iss": "https://idp.example", "sub": "alice", "aud": audience}))); err != nil {
		t.Fatal(err)
	}
}

func TestAnIssuerThatPublishesItsKeysOverPlainHTTPIsRefused(t *testing.T) {
	t.Parallel()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"issuer": "` + srv.URL + `", "jwks_uri": "http://keys.example.com/jwks.json", "authorization_endpoint": "` + srv.URL + `/a", "token_endpoint": "` + srv.URL + `/t"}`))
	}))
	t.Cleanup(srv.Close)
	_, err := identity.NewOIDC(context.Background(), identity.OIDCConfig{Issuer: srv.URL, Audience: audience})
	if err == nil || !strings.Contains(err.Error(), "is not https") {
		t.Fatalf("err = %v", err)
	}
}

func TestAnIssuerWhoseDiscoveryFailsIsRefusedAtStartWithWhatToCheck(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	for name, cfg := range map[string]identity.OIDCConfig{
		"discovery names another issuer": {Issuer: iss.URL + "/", Audience: audience},
		"nothing listens there":          {Issuer: "http://127.0.0.1:1", Audience: audience},
		"no audience":                    {Issuer: iss.URL},
	} {
		_, err := identity.NewOIDC(context.Background(), cfg)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), "issuer") || !strings.Contains(err.Error(), "audience") && !strings.Contains(err.Error(), "jwks_url") {
			t.Errorf("%s: error %q does not say which key to check", name, err)
		}
	}
}

// Many callers meeting a rotated key at once share one refetch (run with
// -race).
func TestCallersMeetingARotatedKeyAtOnceShareOneRefetch(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	o := newOIDC(t, iss, nil)
	before := iss.JWKSFetches()
	iss.Rotate()
	tok := iss.Mint(map[string]any{"sub": "alice", "aud": audience})
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			_, err := o.Authenticate(bearer(tok))
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if got := iss.JWKSFetches() - before; got != 1 {
		t.Errorf("16 callers fetched the key set %d times", got)
	}
}

// A token remembered as verified is refused once its exp passes, as if it
// had never been seen.
func TestARememberedTokenIsRefusedOnceItExpires(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	o := newOIDC(t, iss, nil)
	exp := time.Now().Add(time.Second).Truncate(time.Second).Add(time.Second)
	tok := iss.Mint(map[string]any{"sub": "alice", "aud": audience, "groups": []string{"dev"}, "exp": exp.Unix()})
	p, err := o.Authenticate(bearer(tok))
	if err != nil {
		t.Fatal(err)
	}
	p.Groups[0] = "admins" // a caller changing its copy changes no one else's
	if p, err := o.Authenticate(bearer(tok)); err != nil || p.Groups[0] != "dev" {
		t.Fatalf("second use: %+v, %v", p, err)
	}
	time.Sleep(time.Until(exp) + 50*time.Millisecond)
	if _, err := o.Authenticate(bearer(tok)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("after exp: %v", err)
	}
}
