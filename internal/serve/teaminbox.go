package serve

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/inbox/web"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store"
)

// The team inbox: every replica serves the asks of the shared store to
// the principals who may answer them, at /inbox (docs/serve.md, "The
// team inbox"). An ask is shown to its asker and, when the config names
// approvers for the tool, to every principal who may approve it; with none
// named, to its asker only. The answering replica checks the answerer
// against the approver levels stored with the ask; the asking replica
// applies the answer under the rules in force (host.ApproveBy).
//
// The API takes the same bearer credential as /mcp, in the Authorization
// header: the page keeps a pasted token in sessionStorage and sends it
// itself. No cookie is ever set, so another site cannot make a browser
// answer an ask (nothing it could send carries the credential).

// Team inbox paths.
const (
	TeamInboxPath    = "/inbox"
	teamInboxAPIAsks = "/inbox/api/asks"
)

// teamInboxAssets is the page, its script and its style.
//
//go:embed teaminbox.html teaminbox.js teaminbox.css
var teamInboxAssets embed.FS

var teamInboxTypes = map[string]string{
	"teaminbox.html": "text/html; charset=utf-8",
	"teaminbox.js":   "text/javascript; charset=utf-8",
	"teaminbox.css":  "text/css; charset=utf-8",
}

// maxAnswerBytes bounds an answer's body: {option, scope}.
const maxAnswerBytes = 4 << 10

// teamInboxRoutes adds the page and its API to mux; auth is the identity
// middleware /mcp has. Without a store there is no team inbox: the page
// says so and the API answers 404.
func (s *Server) teamInboxRoutes(mux *http.ServeMux, auth func(http.Handler) http.Handler) {
	mux.HandleFunc("GET "+TeamInboxPath, s.teamInboxAsset("teaminbox.html"))
	mux.HandleFunc("GET "+TeamInboxPath+"/static/teaminbox.js", s.teamInboxAsset("teaminbox.js"))
	mux.HandleFunc("GET "+TeamInboxPath+"/static/teaminbox.css", s.teamInboxAsset("teaminbox.css"))
	// Each principal's API calls are limited as their /mcp requests are
	// (buckets of their own): every call reads the store.
	lim := newRateLimits(s.opts.RatePerSecond, s.opts.RateBurst)
	mux.HandleFunc("GET "+TeamInboxPath+"/api/config", s.teamInboxConfig)
	mux.Handle("GET "+teamInboxAPIAsks, auth(limitTeamInbox(lim, s.listTeamAsks)))
	mux.Handle("POST "+teamInboxAPIAsks+"/{id}", auth(limitTeamInbox(lim, s.answerTeamAsk)))
}

// limitTeamInbox refuses a principal's API call beyond their rate (l nil:
// no limit) with 429 and Retry-After.
func limitTeamInbox(l *rateLimits, next http.HandlerFunc) http.Handler {
	if l == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ok, wait := l.allow(viewer(r).Name, time.Now()); !ok {
			teamInboxHeaders(w.Header())
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeTeamError(w, http.StatusTooManyRequests, "rate limit: retry in %d s ([serve.rate_limit] applies to the team inbox too)", secs)
			return
		}
		next(w, r)
	})
}

// teamInboxHeaders go on every answer of the page and its API: the page
// runs only its own script and style, talks only to this origin, and is
// framed by nobody.
func teamInboxHeaders(h http.Header) {
	web.SecurityHeaders(h, "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
}

// teamInboxAsset serves one embedded file. The page holds no secret: it
// asks for a token and sends it with each API call.
func (s *Server) teamInboxAsset(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		teamInboxHeaders(w.Header())
		b, err := teamInboxAssets.ReadFile(name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", teamInboxTypes[name])
		_, _ = w.Write(b)
	}
}

// teamInboxConfig tells the page, before it holds a token, whether it
// needs one (serve authenticates callers) and whether there is a team
// inbox at all (a store): it says nothing about any ask.
func (s *Server) teamInboxConfig(w http.ResponseWriter, _ *http.Request) {
	teamInboxHeaders(w.Header())
	writeTeamJSON(w, http.StatusOK, map[string]bool{"auth": s.opts.Auth != nil, "store": s.opts.Store != nil})
}

// viewer is who calls the API: the principal the identity middleware
// found (the local principal when serve authenticates nobody).
func viewer(r *http.Request) policy.Caller {
	p, ok := identity.FromContext(r.Context())
	if !ok {
		p = identity.Local
	}
	return policy.Caller{Name: p.Name, Groups: p.Groups}
}

// mayAnswer reports whether c's answer to a counts: with approvers named,
// c must be one at every level (the asker too); with none, only the asker
// answers. The asking replica checks again under the rules in force.
func mayAnswer(a *store.StoredAsk, c policy.Caller) bool {
	if len(a.Approvers) == 0 {
		return c.Name != "" && c.Name == a.Principal
	}
	return policy.MayApproveLevels(a.Approvers, c)
}

// teamAskView is one ask as the API shows it to a viewer.
type teamAskView struct {
	ID        string         `json:"id"`
	Created   time.Time      `json:"created"`
	Expires   time.Time      `json:"expires"`
	Server    string         `json:"server"`
	Tool      string         `json:"tool"`
	App       string         `json:"app,omitempty"`
	Title     string         `json:"title,omitempty"`
	Reasons   []string       `json:"reasons,omitempty"`
	Hints     inbox.Hints    `json:"hints"`
	Arguments string         `json:"arguments"`
	Digest    string         `json:"digest,omitempty"`
	Scope     string         `json:"scope,omitempty"`
	Options   []inbox.Option `json:"options"`
	// Asker is the principal whose call waits.
	Asker string `json:"asker"`
	// Approvers says whose answer counts ("" when only the asker's).
	Approvers string `json:"approvers,omitempty"`
	// Own says the viewer asked; MayAnswer that the viewer's answer
	// counts (an asker who is no approver sees the ask, not the buttons).
	Own       bool `json:"own"`
	MayAnswer bool `json:"may_answer"`
}

func viewOf(a *store.StoredAsk, c policy.Caller) teamAskView {
	q := &a.Ask
	opts := q.Options
	if opts == nil {
		opts = []inbox.Option{}
	}
	return teamAskView{ID: q.ID, Created: q.Created, Expires: q.Expires, Server: q.Server, Tool: q.Tool, App: q.App,
		Title: q.Title, Reasons: q.Reasons, Hints: q.Hints, Arguments: q.Arguments, Digest: q.Digest, Scope: q.Scope,
		Options: opts, Asker: a.Principal, Approvers: approverNames(a.Approvers),
		Own: a.Principal == c.Name, MayAnswer: mayAnswer(a, c)}
}

// approverNames says whose answer counts: one level's list, or each
// level's, all of which an approver must be in.
func approverNames(levels [][]string) string {
	parts := make([]string, len(levels))
	for i, l := range levels {
		parts[i] = strings.Join(l, ", ")
		if len(levels) > 1 && len(l) > 1 {
			parts[i] = "(one of " + parts[i] + ")"
		}
	}
	return strings.Join(parts, " and ")
}

// listTeamAsks answers GET /inbox/api/asks: the open asks the viewer may
// see (their own, and those they may answer), oldest first.
func (s *Server) listTeamAsks(w http.ResponseWriter, r *http.Request) {
	st := s.teamStore(w)
	if st == nil {
		return
	}
	c := viewer(r)
	open, more, err := st.OpenAsks(r.Context())
	if err != nil {
		s.log.Warn("team inbox: cannot list the open asks", "err", err)
		writeTeamError(w, http.StatusServiceUnavailable, "the shared store cannot list the asks now (%v); the page tries again", err)
		return
	}
	views := []teamAskView{}
	for i := range open {
		if a := &open[i]; a.Principal == c.Name || len(a.Approvers) > 0 && mayAnswer(a, c) {
			views = append(views, viewOf(a, c))
		}
	}
	writeTeamJSON(w, http.StatusOK, map[string]any{
		"now": time.Now().UTC(), "viewer": map[string]any{"principal": c.Name, "groups": nonNilStrings(c.Groups)},
		"asks": views, "more": more,
	})
}

// teamStore sets the team inbox's headers on an API answer and gives the
// shared store it answers from; a gateway with none has no team inbox, so
// it answers 404 saying how to have one, and gives nil.
func (s *Server) teamStore(w http.ResponseWriter) *store.Store {
	teamInboxHeaders(w.Header())
	if s.opts.Store == nil {
		writeTeamError(w, http.StatusNotFound, "this gateway has no shared store, so no team inbox: start serve with --store")
	}
	return s.opts.Store
}

// teamAnswerBody is a POST /inbox/api/asks/{id} body.
type teamAnswerBody struct {
	Option string `json:"option"`
	// Scope is whose calls an "always" answer covers: "principal" (the
	// asker; the default), "group:NAME" or "team".
	Scope string `json:"scope,omitempty"`
}

// answerTeamAsk answers POST /inbox/api/asks/{id}: the viewer's answer,
// if it counts and is the first.
func (s *Server) answerTeamAsk(w http.ResponseWriter, r *http.Request) {
	st := s.teamStore(w)
	if st == nil {
		return
	}
	var body teamAnswerBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAnswerBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || dec.Decode(&struct{}{}) != io.EOF {
		writeTeamError(w, http.StatusBadRequest, `the body must be one JSON object {"option": ..., "scope": ...}`)
		return
	}
	c := viewer(r)
	a, err := st.GetAsk(r.Context(), r.PathValue("id"))
	switch {
	case errors.Is(err, inbox.ErrUnknownAsk):
		writeTeamError(w, http.StatusNotFound, "no such ask")
		return
	case err != nil:
		s.log.Warn("team inbox: cannot read an ask", "ask", r.PathValue("id"), "err", err)
		writeTeamError(w, http.StatusServiceUnavailable, "the shared store cannot read the ask now (%v); answer again", err)
		return
	}
	if !mayAnswer(&a, c) {
		writeTeamError(w, http.StatusForbidden, "%s", notApproverWords(&a, c))
		return
	}
	if !a.Ask.Offers(body.Option) {
		writeTeamError(w, http.StatusBadRequest, "the ask does not offer %q", body.Option)
		return
	}
	scope, err := grantScope(&a, body)
	if err != nil {
		writeTeamError(w, http.StatusBadRequest, "%v", err)
		return
	}
	won, err := st.AnswerAsk(r.Context(), a.Ask.ID, body.Option, session.Who{Principal: c.Name, Groups: c.Groups}, scope)
	if err != nil {
		s.log.Warn("team inbox: cannot record an answer", "ask", a.Ask.ID, "err", err)
		writeTeamError(w, http.StatusServiceUnavailable, "the shared store did not record the answer (%v); answer again", err)
		return
	}
	if !won {
		s.lostAnswer(r.Context(), w, st, a.Ask.ID)
		return
	}
	writeTeamJSON(w, http.StatusOK, map[string]any{"answered": true, "option": body.Option})
}

// lostAnswer tells an answerer why their answer did not count: another
// came first, or the asker stopped waiting.
func (s *Server) lostAnswer(ctx context.Context, w http.ResponseWriter, st *store.Store, id string) {
	a, err := st.GetAsk(ctx, id)
	if err != nil {
		writeTeamError(w, http.StatusConflict, "the ask is no longer open")
		return
	}
	switch a.State(time.Now()) {
	case store.AskAnswered:
		writeTeamError(w, http.StatusConflict, "the ask was already answered (%s, by %s): the first answer wins", a.Answer.Option, a.Answer.By.Principal)
	case store.AskWithdrawn:
		writeTeamError(w, http.StatusGone, "the ask was withdrawn: the call was answered elsewhere, or stopped waiting")
	default:
		writeTeamError(w, http.StatusGone, "the ask expired: the call stopped waiting and was denied")
	}
}

// notApproverWords says why c's answer to a does not count.
func notApproverWords(a *store.StoredAsk, c policy.Caller) string {
	if len(a.Approvers) == 0 {
		return fmt.Sprintf("%q may not answer this ask: the config names no approvers for %s/%s, so only the asker (%s) answers it", c.Name, a.Ask.Server, a.Ask.Tool, a.Principal)
	}
	return fmt.Sprintf("%q may not answer this ask: %s/%s needs approval by %s", c.Name, a.Ask.Server, a.Ask.Tool, approverNames(a.Approvers))
}

// grantScope reads an answer's scope: only "always" takes one, and only
// an approver may grant beyond the asker (with no approvers named, the
// asker answers for themselves only).
func grantScope(a *store.StoredAsk, body teamAnswerBody) (session.GrantScope, error) {
	if body.Option != policy.OptionAlways {
		if body.Scope != "" {
			return session.GrantScope{}, fmt.Errorf("scope %q is for an \"always\" answer only", body.Scope)
		}
		return session.GrantScope{}, nil
	}
	var g session.GrantScope
	switch name, isGroup := strings.CutPrefix(body.Scope, "group:"); {
	case body.Scope == "" || body.Scope == session.ScopePrincipal:
		g = session.GrantScope{Kind: session.ScopePrincipal, Name: a.Principal}
	case body.Scope == session.ScopeTeam:
		g = session.GrantScope{Kind: session.ScopeTeam}
	case isGroup && name != "" && strings.TrimSpace(name) == name:
		g = session.GrantScope{Kind: session.ScopeGroup, Name: name}
	default:
		return g, fmt.Errorf(`scope %q: want "principal", "group:NAME" or "team"`, body.Scope)
	}
	if g.Kind != session.ScopePrincipal && len(a.Approvers) == 0 {
		return g, fmt.Errorf("scope %q: with no approvers named for %s/%s, an answer covers the asker's own calls only (scope \"principal\")", body.Scope, a.Ask.Server, a.Ask.Tool)
	}
	return g, nil
}

func writeTeamJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func writeTeamError(w http.ResponseWriter, code int, format string, args ...any) {
	writeTeamJSON(w, code, map[string]string{"error": fmt.Sprintf(format, args...)})
}

func nonNilStrings(v []string) []string {
	if v == nil {
		return []string{}
	}
	return slices.Clone(v)
}

// teamInbox is the channel.TeamInbox of one caller's asks: posted to the
// shared store as the caller's.
type teamInbox struct {
	st        *store.Store
	principal string
}

func (t teamInbox) Post(ctx context.Context, a inbox.Ask, approvers [][]string) (channel.TeamPending, error) {
	posted, err := t.st.PostAsk(ctx, a, t.principal, approvers)
	if err != nil {
		return nil, err
	}
	return &teamPending{st: t.st, id: posted.ID}, nil
}

// teamPending is one ask this replica posted and waits on.
type teamPending struct {
	st   *store.Store
	id   string
	once sync.Once
	err  error
}

func (p *teamPending) ID() string { return p.id }

func (p *teamPending) Wait(ctx context.Context) (channel.TeamAnswer, error) {
	ans, err := p.st.WaitAsk(ctx, p.id)
	if err != nil {
		return channel.TeamAnswer{}, err
	}
	return channel.TeamAnswer{Option: ans.Option, By: ans.By.Principal, ByGroups: ans.By.Groups, Scope: ans.Scope}, nil
}

// Close withdraws the ask, with a context of its own: the call's may be
// gone, and an ask left open would be shown until it expires.
func (p *teamPending) Close() error {
	p.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, p.err = p.st.WithdrawAsk(ctx, p.id)
	})
	return p.err
}

// Withdraw withdraws the ask unless an approver answered it first, and
// then returns that answer (channel.TeamWithdrawer): the store, not the
// order in which this replica heard of them, says which answer was first.
func (p *teamPending) Withdraw(ctx context.Context) (*channel.TeamAnswer, error) {
	withdrawn, err := p.st.WithdrawAsk(ctx, p.id)
	if err != nil || withdrawn {
		return nil, err
	}
	a, err := p.st.GetAsk(ctx, p.id)
	if err != nil || a.Answer == nil {
		return nil, err
	}
	return &channel.TeamAnswer{Option: a.Answer.Option, By: a.Answer.By.Principal, ByGroups: a.Answer.By.Groups, Scope: a.Answer.Scope}, nil
}
