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
// headers or errors).

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
}

// readyz answers 200 when notReady returns no names and the server is not
// draining, and 503 with the names otherwise.
func readyz(notReady func() []string, draining func() bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !probeMethod(w, r) {
			return
		}
		st := readiness{NotReady: notReady(), Draining: draining()}
		st.Ready = len(st.NotReady) == 0 && !st.Draining
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
