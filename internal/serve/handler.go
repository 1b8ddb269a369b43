package serve

import (
	"net/http"
	"time"

	"github.com/toolwarden/toolwarden/internal/identity"
)

// Handler is everything serve answers over HTTP, for a caller that runs
// its own http.Server (Front runs one with the bounds a public listener
// needs):
//
//	/mcp         body limit -> identity (refused credentials limited per address) -> rate limit -> MCPHandler
//	/healthz     200 "ok" (no credential)
//	/readyz      200 when every upstream is started and the store answers, else 503 naming what is not (no credential)
//	/.well-known/oauth-protected-resource[/mcp]   RFC 9728 metadata, when Options.Auth is set (no credential)
//	/inbox       the team inbox page (no credential); /inbox/api/* identity -> the team inbox (teaminbox.go)
func (s *Server) Handler() http.Handler { return s.handler(DefaultReadTimeout, nil) }

// handler builds Handler with the body read deadline readTimeout, and f's
// gate (shutdown) after the body limit when f is not nil.
func (s *Server) handler(readTimeout time.Duration, f *Front) http.Handler {
	maxBody := s.opts.MaxRequestBytes
	if maxBody <= 0 {
		maxBody = DefaultMaxRequestBytes
	}
	metaURL := identity.MetadataURL(s.opts.ResourceURL)
	refusals := newRefusalLimits(RefusalsPerSecond, RefusalBurst, maxRefusalAddrs)
	mcpChain := limitBody(maxBody, readTimeout,
		f.gate(authenticate(s.opts.Auth, metaURL, refusals,
			limitRate(newRateLimits(s.opts.RatePerSecond, s.opts.RateBurst), s.MCPHandler()))))
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpChain)
	// The team inbox's API takes the same credentials (teaminbox.go).
	s.teamInboxRoutes(mux, func(h http.Handler) http.Handler { return f.gate(authenticate(s.opts.Auth, metaURL, refusals, h)) })
	mux.HandleFunc("/healthz", healthz)
	mux.Handle("/readyz", readyz(s.notReady, f.isDraining, s.storeDown()))
	if s.opts.Auth != nil && s.opts.ResourceURL != "" {
		meta := identity.MetadataHandler(s.opts.ResourceURL, issuersOf(s.opts.Auth))
		for _, p := range identity.MetadataPaths(s.opts.ResourceURL) {
			mux.Handle(p, meta)
		}
	}
	return closeUnread(readTimeout, mux)
}

// DefaultMaxRequestBytes bounds a request body when Options set none
// (max_request_kib's default).
const DefaultMaxRequestBytes = 1024 << 10

// issuersOf names the authorization servers a's tokens come from, for
// the protected-resource metadata.
func issuersOf(a identity.Authenticator) []string {
	if o, ok := a.(interface{ Issuer() string }); ok {
		return []string{o.Issuer()}
	}
	return nil
}

// closeUnread closes the connection after any request with a body that
// limitBody does not read (a POST elsewhere than /mcp, a GET with a body),
// under a read deadline: net/http reads up to 256 KiB of an unread body
// after the answer, and a client may dribble it.
func closeUnread(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 && (r.Method != http.MethodPost || r.URL.Path != "/mcp") {
			w.Header().Set("Connection", "close")
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		next.ServeHTTP(w, r)
	})
}

// notReady names the upstreams that have not started: every one until
// Start has tried them all, then those whose connection is down.
func (s *Server) notReady() []string {
	var names []string
	select {
	case <-s.started:
		for _, u := range s.upstreams() {
			if u.Err() != nil {
				names = append(names, u.Name())
			}
		}
	default:
		for _, u := range s.upstreams() {
			names = append(names, u.Name())
		}
	}
	return names
}
