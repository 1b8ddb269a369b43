package identity_test

import (
	"context"
	"testing"

	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
)

// Known vouches only for what costs no signature check: a tokens-file
// entry, or a JWT already verified; never a valid JWT not yet seen.
func TestKnownVouchesForFileTokensAndVerifiedJWTsOnly(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	o, err := identity.NewOIDC(context.Background(), identity.OIDCConfig{Issuer: iss.URL, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	a := identity.Chain(tokensFor(t), o)
	if p, ok := identity.Known(a, bearer("tok-alice")); !ok || p.Via != "token" {
		t.Errorf("a file token: %+v %v, want known", p, ok)
	}
	if _, ok := identity.Known(a, bearer("tok-mallory")); ok {
		t.Error("a token not in the file is known")
	}
	jwt := iss.Mint(map[string]any{"sub": "bob", "aud": audience})
	if _, ok := identity.Known(a, bearer(jwt)); ok {
		t.Error("a valid JWT never verified is known: Known would have checked its signature")
	}
	if _, err := a.Authenticate(bearer(jwt)); err != nil {
		t.Fatal(err)
	}
	if p, ok := identity.Known(a, bearer(jwt)); !ok || p.Name != "bob" {
		t.Errorf("a JWT verified once: %+v %v, want known as bob", p, ok)
	}
	identity.ForgetVerified(o)
	if _, ok := identity.Known(a, bearer(jwt)); ok {
		t.Error("a JWT is known after the verified cache forgot it")
	}
}
