package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"mime"
	"net"
	"net/http"
	"strings"
)

// CheckLoopback refuses a listen address that is not a loopback IP: the
// page answers asks, so it must not be reachable from another machine.
// "localhost" is refused too, because a resolver may map it elsewhere.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %v (want 127.0.0.1:PORT or [::1]:PORT)", addr, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--addr %q: the inbox answers approvals, so it listens on a loopback address only (127.0.0.1:PORT or [::1]:PORT), never %q", addr, host)
	}
	return nil
}

// newToken returns the per-run secret that opens the page.
func newToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("web: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// cookieName is per port: cookies are shared by every port of a host, and
// two inboxes (or another local page) must not overwrite each other's.
func cookieName(listen string) string {
	_, port, _ := net.SplitHostPort(listen)
	return "toolwarden_inbox_" + port
}

// allowedHosts are the Host headers a request may carry: the address the
// page listens on, and localhost with the same port (an SSH tunnel to the
// same port). Any other name is a DNS-rebinding attempt.
func allowedHosts(listen string) map[string]bool {
	_, port, _ := net.SplitHostPort(listen)
	return map[string]bool{listen: true, net.JoinHostPort("localhost", port): true}
}

// pageCSP is the local inbox page's Content-Security-Policy.
const pageCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; object-src 'none'"

// securityHeaders go on every response.
func securityHeaders(h http.Header) { SecurityHeaders(h, pageCSP) }

// SecurityHeaders sets the headers every answer of a toolwarden approval
// page carries (this inbox, and serve's team inbox): csp is the page's own
// Content-Security-Policy; the rest are the same for both, so a hardening
// made for one page reaches the other: no sniffing, no framing, no
// referrer, no cross-origin reads or window handles, no caching.
func SecurityHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

// guard wraps the page's routes with the checks every request passes:
// the Host header, then for state changes the Origin, the fetch metadata
// and the content type.
func (s *Server) guard(listen string, next http.Handler) http.Handler {
	hosts := allowedHosts(listen)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		if !hosts[r.Host] {
			http.Error(w, "toolwarden inbox: wrong Host header "+quote(r.Host)+": open the address toolwarden inbox printed", http.StatusMisdirectedRequest)
			return
		}
		// A request the page did not make itself: another site, or another
		// port of this machine (same-site, so its cookies would be sent).
		if site := r.Header.Get("Sec-Fetch-Site"); strings.HasPrefix(r.URL.Path, "/api/") && site != "" && site != "same-origin" {
			http.Error(w, "toolwarden inbox: refused a request from another site ("+site+")", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if r.Header.Get("Origin") != "http://"+r.Host {
				http.Error(w, "toolwarden inbox: refused a state change without this page's Origin (got "+quote(r.Header.Get("Origin"))+")", http.StatusForbidden)
				return
			}
			if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
				http.Error(w, "toolwarden inbox: a state change must be application/json", http.StatusUnsupportedMediaType)
				return
			}
		}
		// No request the page makes has a large body; a slow one is cut
		// by the server's ReadTimeout.
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// authorized reports whether the request carries the per-run token in a
// cookie of the page's name. Every cookie of that name is looked at, not
// the first: a page on another port of this machine can set one of the
// same name (cookies ignore ports) with a longer Path, which the browser
// sends first, and would otherwise lock the holder out. A planted cookie
// still opens nothing: only the token does.
func (s *Server) authorized(r *http.Request, listen string) bool {
	// All are compared (their number is bounded by maxHeaderBytes), and
	// how many fail says nothing of the token.
	ok := 0
	for _, c := range r.CookiesNamed(cookieName(listen)) {
		ok |= subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.token))
	}
	return ok == 1
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
