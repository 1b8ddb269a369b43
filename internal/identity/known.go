package identity

import (
	"crypto/sha256"
	"net/http"
	"time"
)

// Known accepts the token of r only when a can vouch for it without a
// signature check: a tokens-file entry (one SHA-256 and a table compare)
// or a JWT the OIDC authenticator verified within the last minute (one
// SHA-256 and a map lookup). serve asks it instead of Authenticate for an
// address that keeps sending refused tokens, so such a flood never costs a
// signature check, while tokens a caller already uses keep working. A
// wrapper with Unwrap() Authenticator is asked through; an Authenticator
// of another kind knows no token.
func Known(a Authenticator, r *http.Request) (Principal, bool) {
	switch x := a.(type) {
	case *Tokens:
		p, err := x.Authenticate(r)
		return p, err == nil
	case *OIDC:
		token, err := BearerToken(r)
		if err != nil {
			return Principal{}, false
		}
		return x.verified.get(sha256.Sum256([]byte(token)), time.Now())
	case issuerChain:
		return Known(x.chain, r)
	case chain:
		for _, m := range x {
			if p, ok := Known(m, r); ok {
				return p, true
			}
		}
	case interface{ Unwrap() Authenticator }:
		return Known(x.Unwrap(), r)
	}
	return Principal{}, false
}
