package web

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// The page: one HTML file, its script and its style, embedded so the
// binary serves them and nothing is fetched at run time.
//
//go:embed index.html app.js chart.js app.css
var assets embed.FS

// Server is one run of the inbox page: the rendezvous directory it reads,
// what else it shows, and its per-run token.
type Server struct {
	dir   string
	opts  Options
	token string
	// stop ends every live update stream (Shutdown alone would wait for
	// them forever).
	stop   context.Context
	cancel context.CancelFunc
	// streams counts the live update streams open (maxLiveStreams).
	streams chan struct{}
	skips   skipLog
}

// New makes the page for the rendezvous directory dir (see inbox.Dir).
func New(dir string, opts Options) (*Server, error) {
	if _, err := inbox.List(dir); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{dir: dir, opts: opts, token: newToken(), stop: ctx, cancel: cancel, streams: make(chan struct{}, maxLiveStreams)}, nil
}

// URL is the address that opens the page served at listen (host:port),
// with the token: whoever has it can answer asks, so print it only to the
// user.
func (s *Server) URL(listen string) string {
	return "http://" + listen + "/?t=" + s.token
}

// Close ends the live update streams, so that an http.Server's Shutdown
// can finish.
func (s *Server) Close() { s.cancel() }

// site is the page as served at one address.
type site struct {
	*Server
	listen string
	cookie string
}

// Handler serves the page at listen, the host:port the listener is bound
// to (its Host header must match).
func (s *Server) Handler(listen string) http.Handler {
	st := &site{Server: s, listen: listen, cookie: cookieName(listen)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", st.index)
	mux.HandleFunc("GET /a/{id}", st.linkPage)
	mux.HandleFunc("GET /static/{name}", st.static)
	mux.HandleFunc("GET /api/info", st.auth(st.info))
	mux.HandleFunc("GET /api/asks", st.auth(st.asks))
	mux.HandleFunc("POST /api/asks/{id}", st.auth(st.answer))
	mux.HandleFunc("GET /api/events", st.auth(st.events))
	mux.HandleFunc("GET /api/approvals", st.auth(st.approvals))
	mux.HandleFunc("POST /api/approvals/revoke", st.auth(st.revoke))
	mux.HandleFunc("GET /api/decisions", st.auth(st.decisions))
	mux.HandleFunc("GET /api/link/{id}", st.linkAsk)
	mux.HandleFunc("POST /api/link/{id}", st.linkAnswer)
	return s.guard(listen, mux)
}

// index serves the page to a holder of the token. The token comes once in
// the URL; it is moved into an HttpOnly, SameSite=Strict cookie and the
// browser is sent to the bare URL, so it leaves the address bar, history
// and any screenshot.
func (st *site) index(w http.ResponseWriter, r *http.Request) {
	if t := r.URL.Query().Get("t"); t != "" {
		if subtle.ConstantTimeCompare([]byte(t), []byte(st.token)) != 1 {
			forbidden(w)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: st.cookie, Value: st.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if !st.authorized(r, st.listen) {
		forbidden(w)
		return
	}
	serveAsset(w, "index.html")
}

func forbidden(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	io.WriteString(w, "toolwarden inbox: this page needs the address with its token that `toolwarden inbox` printed (http://127.0.0.1:PORT/?t=...).\n")
}

// static serves the script and style: they hold no secret, and the page
// cannot load without them.
func (st *site) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	switch name {
	case "app.js", "chart.js", "app.css":
		serveAsset(w, name)
	default:
		http.NotFound(w, r)
	}
}

var contentTypes = map[string]string{
	"index.html": "text/html; charset=utf-8",
	"app.js":     "text/javascript; charset=utf-8",
	"chart.js":   "text/javascript; charset=utf-8",
	"app.css":    "text/css; charset=utf-8",
}

func serveAsset(w http.ResponseWriter, name string) {
	b, err := assets.ReadFile(name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentTypes[name])
	w.Write(b)
}

// auth refuses an API call without the token.
func (st *site) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !st.authorized(r, st.listen) {
			writeError(w, http.StatusForbidden, "the per-run token is missing or wrong: open the address toolwarden inbox printed")
			return
		}
		h(w, r)
	}
}

// info says what this inbox shows and where from.
func (st *site) info(w http.ResponseWriter, r *http.Request) {
	approvals := ""
	if st.opts.approvals != nil {
		approvals = st.opts.approvals.Path()
	}
	notes := st.opts.notes
	if notes == nil {
		notes = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"dir": st.dir, "pid": os.Getpid(), "approvals": approvals, "audit": st.opts.audit, "notes": notes,
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"encoding the response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}

func writeError(w http.ResponseWriter, code int, format string, args ...any) {
	writeJSON(w, code, map[string]string{"error": fmt.Sprintf(format, args...)})
}

// readJSON decodes a small request body.
func readJSON(r *http.Request, v any) error {
	d := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	d.DisallowUnknownFields()
	return d.Decode(v)
}
