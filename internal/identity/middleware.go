package identity

import (
	"errors"
	"net/http"
	"path"
	"strings"
)

// MetadataPathPrefix is where RFC 9728 protected-resource metadata is
// served. Middleware lets requests under it through unauthenticated: a
// client reads it to learn how to get a token in the first place.
const MetadataPathPrefix = "/.well-known/oauth-protected-resource"

// Local is the principal of every request when serve runs without
// authentication, which CheckListen allows on loopback only.
var Local = Principal{Name: "local", Via: "loopback"}

// Middleware authenticates every request with a and puts the principal in
// its context. A refused request gets 401 (or 400) and a
// WWW-Authenticate: Bearer challenge that names metadataURL, as the MCP
// authorization spec asks, and never reaches next. A nil a makes every
// request Local. A token in the query string is refused either way: URLs
// end up in logs and browser histories.
func Middleware(a Authenticator, metadataURL string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if isMetadataPath(r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
			if r.URL.Query().Has("access_token") {
				Refuse(w, invalidRequest("a token in the URL is refused (URLs are logged): send it in the Authorization header"), metadataURL)
				return
			}
			p := Local
			if a != nil {
				var err error
				if p, err = a.Authenticate(r); err != nil {
					Refuse(w, err, metadataURL)
					return
				}
			}
			next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
		})
	}
}

// isMetadataPath reports whether p is the metadata prefix or a clean path
// under it: "/.well-known/oauth-protected-resource/../../mcp" is not, so a
// handler that does not clean paths cannot be reached through it.
func isMetadataPath(p string) bool {
	return p == MetadataPathPrefix || strings.HasPrefix(p, MetadataPathPrefix+"/") && path.Clean(p) == p
}

// Refuse writes the challenge for err: its status, a WWW-Authenticate
// header with RFC 6750's error code and the resource metadata URL, and the
// description as a one-line body. An error that is not an *AuthError is
// reported as an invalid token without its text, which might quote input.
func Refuse(w http.ResponseWriter, err error, metadataURL string) {
	var ae *AuthError
	if !errors.As(err, &ae) {
		ae = invalidToken("the token was not accepted")
	}
	challenge := "Bearer"
	sep := " "
	if metadataURL != "" {
		challenge += sep + `resource_metadata="` + quotable(metadataURL) + `"`
		sep = ", "
	}
	if ae.Code != "" {
		challenge += sep + `error="` + ae.Code + `", error_description="` + quotable(ae.Description) + `"`
	}
	h := w.Header()
	h.Set("WWW-Authenticate", challenge)
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(ae.Status)
	_, _ = w.Write([]byte("toolwarden serve: unauthorized: " + ae.Description + "\n"))
}

// quotable drops what cannot sit inside an RFC 9110 quoted-string without
// escaping (quotes, backslashes, control bytes), so the header stays one
// well-formed challenge whatever a description says.
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}
