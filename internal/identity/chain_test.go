package identity_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
)

func TestWithTokensAndAnIssuerEitherKindOfTokenIsAccepted(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	o, err := identity.NewOIDC(context.Background(), identity.OIDCConfig{Issuer: iss.URL, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	a := identity.Chain(tokensFor(t), o)
	// The metadata's authorization_servers come from the chain.
	if got := identity.Issuers(a); len(got) != 1 || got[0] != iss.URL {
		t.Errorf("Issuers = %v", got)
	}
	if ia, ok := a.(interface{ Issuer() string }); !ok || ia.Issuer() != iss.URL {
		t.Errorf("the chain does not answer Issuer with the issuer's URL")
	}
	if got := identity.Issuers(tokensFor(t)); len(got) != 0 {
		t.Errorf("a tokens file has issuers %v", got)
	}
	if p, err := a.Authenticate(bearer("tok-alice")); err != nil || p.Via != "token" {
		t.Errorf("file token: %+v, %v", p, err)
	}
	if p, err := a.Authenticate(bearer(iss.Mint(map[string]any{"sub": "bob", "aud": audience}))); err != nil || p.Name != "bob" || p.Via != "oidc" {
		t.Errorf("JWT: %+v, %v", p, err)
	}
	// A JWT the issuer refuses is reported as the issuer saw it, not as
	// "not in the tokens file".
	_, err = a.Authenticate(bearer(iss.Mint(map[string]any{"sub": "bob", "aud": "elsewhere"})))
	if err == nil || !strings.Contains(err.Error(), "another audience") {
		t.Errorf("wrong-audience JWT: %v", err)
	}
	_, err = a.Authenticate(bearer("tok-mallory"))
	if err == nil || !strings.Contains(err.Error(), "not one this server issued") {
		t.Errorf("unknown opaque token: %v", err)
	}
	if _, err := a.Authenticate(bearer("")); err == nil {
		t.Error("empty token accepted")
	}
}

func TestAChainOfNothingIsNoAuthenticatorAtAll(t *testing.T) {
	t.Parallel()
	_, err := identity.Chain(nil, nil).Authenticate(bearer("x"))
	if err != identity.ErrNoCredentials {
		t.Errorf("err = %v", err)
	}
}
