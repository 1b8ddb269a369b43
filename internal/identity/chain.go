package identity

import (
	"errors"
	"net/http"
)

// Chain is an Authenticator that asks each of as in turn and takes the
// first principal one vouches for: a tokens file and an issuer can both be
// configured. When all refuse, the refusal reported is the first from an
// authenticator that recognised the token's form (a JWT the issuer
// rejected says why, not "unknown token"). Nil entries are skipped.
func Chain(as ...Authenticator) Authenticator {
	var live chain
	for _, a := range as {
		if a != nil {
			live = append(live, a)
		}
	}
	if len(live) == 1 {
		return live[0]
	}
	if iss := Issuers(live); len(iss) > 0 {
		return issuerChain{live, iss[0]}
	}
	return live
}

// issuerChain is a chain with an issuer among its members: it answers
// Issuer as the OIDC member does, so code that asks an Authenticator for
// its issuer (for protected-resource metadata) needs no type switch.
type issuerChain struct {
	chain
	issuer string
}

func (c issuerChain) Issuer() string { return c.issuer }

// Issuers are the OAuth issuers whose tokens a accepts, for RFC 9728's
// authorization_servers: none for a tokens file.
func Issuers(a Authenticator) []string {
	var out []string
	switch x := a.(type) {
	case issuerChain:
		return Issuers(x.chain)
	case chain:
		for _, m := range x {
			out = append(out, Issuers(m)...)
		}
	case interface{ Issuer() string }:
		if iss := x.Issuer(); iss != "" {
			out = append(out, iss)
		}
	}
	return out
}

type chain []Authenticator

func (c chain) Authenticate(r *http.Request) (Principal, error) {
	var first, telling error
	for _, a := range c {
		p, err := a.Authenticate(r)
		if err == nil {
			return p, nil
		}
		if first == nil {
			first = err
		}
		if telling == nil && !errors.Is(err, errUnrecognized) {
			telling = err
		}
	}
	if telling != nil {
		return Principal{}, telling
	}
	if first == nil {
		return Principal{}, ErrNoCredentials
	}
	return Principal{}, first
}
