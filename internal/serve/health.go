package serve

import (
	"encoding/json"
	"io"
	"net/http"
)

// Probes for a process supervisor or a load balancer. Neither needs a
// credential, so neither says anything a stranger should not read: the
// liveness probe says "ok", the readiness probe names the upstreams that
// are not serving yet (names from the config, never their commands, URLs,
// headers or errors) and says when the shared store is unreachable (never
// its URL or the error: those go to serve's log).

// healthz answers 200 "ok" while the process serves HTTP at all.
func healthz(w http.ResponseWriter, r *http.Request) {
	if !probeMethod(w, r) {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, "ok")
}

// readiness is the body /readyz answers with.
type readiness struct {
	Ready bool `json:"ready"`
	// NotReady names the upstreams (config names) not started yet.
	NotReady []string `json:"not_ready,omitempty"`
	// Draining is set once a shutdown has begun: send no new work here.
	Draining bool `json:"draining,omitempty"`
	// Store is "unreachable" while the shared store does not answer: every
	// call here would be denied.
	Store string `json:"store,omitempty"`
}

// readyz answers 200 when notReady returns no names, the server is not
// draining and storeDown (nil: serve has no store) is false, and 503
// saying which otherwise.
func readyz(notReady func() []string, draining func() bool, storeDown func() bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !probeMethod(w, r) {
			return
		}
		st := readiness{NotReady: notReady(), Draining: draining()}
		if storeDown != nil && storeDown() {
			st.Store = "unreachable"
		}
		st.Ready = len(st.NotReady) == 0 && !st.Draining && st.Store == ""
		code := http.StatusOK
		if !st.Ready {
			code = http.StatusServiceUnavailable
		}
		body, _ := json.Marshal(st)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(code)
		_, _ = w.Write(append(body, '\n'))
	}
}

// probeMethod lets GET and HEAD through and answers anything else 405.
func probeMethod(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}
