package identity_test

import (
	"fmt"
	"testing"

	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
)

// BenchmarkAuthenticate is what identity adds to each request serve
// answers: a tokens-file lookup (every entry compared) and a JWT check.
func BenchmarkAuthenticate(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("tokens file of %d", n), func(b *testing.B) {
			toks := map[string]identity.Principal{}
			for i := range n {
				toks[fmt.Sprintf("tok-%d", i)] = identity.Principal{Name: fmt.Sprintf("p%d", i)}
			}
			a, err := identity.LoadTokens(identitytest.WriteTokens(b, b.TempDir(), toks))
			if err != nil {
				b.Fatal(err)
			}
			r := bearer("tok-7")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Authenticate(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	iss := identitytest.NewIssuer(b)
	o, err := identity.NewOIDC(b.Context(), identity.OIDCConfig{Issuer: iss.URL, Audience: audience})
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range iss.Keys() {
		r := bearer(iss.MintWith(map[string]any{"sub": "alice", "aud": audience, "groups": []string{"dev"}}, identitytest.Sign{Key: k}))
		b.Run("JWT "+k.Alg+" first use", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				identity.ForgetVerified(o)
				if _, err := o.Authenticate(r); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("JWT "+k.Alg+" seen before", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := o.Authenticate(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
