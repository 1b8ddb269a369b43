package identity

import (
	"errors"
	"net/http"
	"strings"
)

// MaxTokenBytes bounds a bearer token. Real access tokens, group-heavy
// ones included, stay well under it; a larger one is refused before it is
// hashed or parsed, so a caller cannot make each request cost more.
const MaxTokenBytes = 16 << 10

// AuthError is why a request was refused, worded for the caller: RFC 6750's
// error code and a description that never quotes the credential. Status is
// 401, or 400 for a request no token could make valid.
type AuthError struct {
	Status      int
	Code        string // "invalid_request", "invalid_token", or "" when no credential was sent
	Description string
}

func (e *AuthError) Error() string {
	if e.Code == "" {
		return e.Description
	}
	return e.Code + ": " + e.Description
}

// ErrNoCredentials is the refusal of a request that carries no bearer
// token: RFC 6750 says its challenge names no error, so a client simply
// starts authorization.
var ErrNoCredentials = &AuthError{Status: http.StatusUnauthorized, Description: "this server requires a bearer token in the Authorization header"}

func invalidToken(desc string) *AuthError {
	return &AuthError{Status: http.StatusUnauthorized, Code: "invalid_token", Description: desc}
}

func invalidRequest(desc string) *AuthError {
	return &AuthError{Status: http.StatusBadRequest, Code: "invalid_request", Description: desc}
}

// errUnrecognized marks a token an authenticator cannot even read (a token
// file entry is not a JWT, a JWT is not a file entry), so that Chain
// reports the other authenticator's more telling refusal.
var errUnrecognized = errors.New("identity: token format not recognized")

type unrecognized struct{ *AuthError }

func (u unrecognized) Unwrap() []error { return []error{u.AuthError, errUnrecognized} }

// BearerToken returns the token of r's Authorization header. It refuses a
// missing header (ErrNoCredentials), a second Authorization header, another
// scheme, and a token that is empty, too large or not RFC 6750 token68.
func BearerToken(r *http.Request) (string, error) {
	values := r.Header.Values("Authorization")
	switch len(values) {
	case 0:
		return "", ErrNoCredentials
	case 1:
	default:
		return "", invalidRequest("more than one Authorization header: send exactly one")
	}
	scheme, token, found := strings.Cut(strings.TrimSpace(values[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		// Another scheme is no credential of ours; a client answers the
		// challenge by fetching a bearer token.
		return "", ErrNoCredentials
	}
	token = strings.TrimLeft(token, " ")
	switch {
	case !found || token == "":
		return "", invalidRequest("the Authorization header says Bearer but carries no token")
	case len(token) > MaxTokenBytes:
		return "", invalidToken("the token is longer than 16384 bytes")
	case !isToken68(token):
		return "", invalidToken("the token has characters a bearer token cannot have")
	}
	return token, nil
}

// isToken68 reports whether s is RFC 6750's b64token: letters, digits,
// "-._~+/", then optional "=" padding.
func isToken68(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/", c) >= 0
		if !ok {
			break
		}
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}
