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
	return live
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
