// Package identity says who is calling toolwarden serve: the principal a
// bearer token or an OAuth access token names, and its groups. Every
// request to serve carries one; policy and remembered approvals are keyed
// by it.
package identity

import (
	"context"
	"net/http"
	"slices"
)

// Principal is the caller of one request, as an authenticator vouched for
// it. Name is stable for one caller (a token file's "principal", a JWT's
// subject); Groups come from the same source and are never read from the
// request itself.
type Principal struct {
	Name   string
	Groups []string
	// Via says how the caller was authenticated: "token", "oidc", or
	// "loopback" when serve listens on loopback without authentication.
	Via string
}

// InGroup reports whether p is a member of group.
func (p Principal) InGroup(group string) bool { return slices.Contains(p.Groups, group) }

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal ctx carries, and whether it carries one.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Authenticator finds the principal of one HTTP request. It returns an
// error when the request carries no credential it accepts; the error's
// text is safe to show the caller (it never echoes the credential).
type Authenticator interface {
	Authenticate(r *http.Request) (Principal, error)
}
