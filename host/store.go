package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// A host with a shared store (Settings.WithStore) is one of several
// processes deciding for the same sessions: `serve` replicas behind a
// load balancer, or a developer's wrap, proxy and hook on one store. Two
// things change:
//
//   - "always" approvals are the store's grants, scoped to a principal, a
//     group or the team and, when bound to arguments, to those exact
//     arguments; step 6 asks the store (Covers), which confirms it is
//     current first. When it cannot, the remembered approvals are set
//     aside and the call is asked, saying why.
//   - a session's pins, labels, approvals, scoped approvals and plugin
//     states are loaded from the store before each Check and Filter when
//     another process saved them since, and saved after each Check,
//     Observe and Approve that changed them. A Check that cannot load or
//     save is denied: nothing is allowed on state that may be stale (a
//     taint set through another replica, say).
//
// Without a store none of this runs: Check pays one nil test.

// WithStore keeps "always" approvals and session state in st, a store
// other processes share (internal/store opens one over SQLite or
// Postgres). The approvals file (WithApprovalsFile), if also set, is then
// not consulted by decisions; Approvals still returns it.
func (s Settings) WithStore(st session.Shared) Settings { s.store = st; return s }

// storeTimeout bounds a store write that no caller's context bounds
// (Approve's): an unreachable database must not hang an answer forever.
const storeTimeout = 15 * time.Second

// sharing is a host's link to its shared store.
type sharing struct {
	st       session.Shared
	sessions sync.Map // session id -> *syncedSession
	log      *slog.Logger
	// engine names the store in reasons ("sqlite", "postgres"), "" when
	// the store does not say.
	engine string
}

// init links the host to st.
func (sh *sharing) init(st session.Shared, log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	sh.st, sh.log = st, log
	if e, ok := st.(interface{ Engine() string }); ok {
		sh.engine = e.Engine()
	}
}

// syncedSession is what this process knows of a session's stored state.
type syncedSession struct {
	mu sync.Mutex
	// rev is the stored revision the live session last took in (loaded
	// or saved); 0 before the first.
	rev int64
	// base is the stored state at rev: what the live session's own
	// changes are measured against (session.Since, Absorb).
	base session.State
	// saved is the session's Changes() when it was last saved.
	saved uint64
	// contacted: the store was read for this session once at least.
	contacted bool
}

func (sh *sharing) synced(id string) *syncedSession {
	if y, ok := sh.sessions.Load(id); ok {
		return y.(*syncedSession)
	}
	y, _ := sh.sessions.LoadOrStore(id, &syncedSession{})
	return y.(*syncedSession)
}

// load takes in what other processes saved of the session since this one
// last saw it. An error means the store could not tell: the caller must
// not decide on the live state alone.
func (sh *sharing) load(ctx context.Context, s *session.Session) error {
	y := sh.synced(s.ID())
	y.mu.Lock()
	defer y.mu.Unlock()
	st, rev, changed, err := sh.st.LoadSession(ctx, s.ID(), y.rev)
	if err != nil {
		return err
	}
	base := y.base
	if !y.contacted {
		y.contacted = true
		if changed {
			base = firstContact(s.Snapshot(), st)
		}
	}
	if !changed {
		if rev == 0 && y.rev > 0 {
			// The row this process saved is gone (swept after a week
			// unused): the store must get the whole live state back,
			// not only what changed since, or a taint older than the
			// last save would be lost to every other process.
			y.base, y.rev, y.saved = session.State{ID: s.ID()}, 0, s.Changes()-1
		}
		return nil
	}
	s.Absorb(st, base)
	y.base, y.rev = st, rev
	return nil
}

// firstContact is the base a session's first load is absorbed against.
// What the live session holds then was not changed by this process but
// brought in from elsewhere (a hook's session file, saved to the store
// too and no newer than it): where the store holds a pin or a plugin's
// state, the store's wins; what only the live session holds is kept, and
// saved with the session's next change.
func firstContact(live, stored session.State) session.State {
	base := live
	base.Plugins = nil
	for name, ps := range live.Plugins {
		if _, ok := stored.Plugins[name]; ok {
			if base.Plugins == nil {
				base.Plugins = map[string]session.PluginState{}
			}
			base.Plugins[name] = ps
		}
	}
	return base
}

// save writes what this process changed in the session since its last
// save, merged in the store with what others saved meanwhile, and takes
// their changes in. It does nothing when nothing changed.
func (sh *sharing) save(ctx context.Context, s *session.Session) error {
	y := sh.synced(s.ID())
	y.mu.Lock()
	defer y.mu.Unlock()
	n := s.Changes()
	if n == y.saved {
		return nil
	}
	merged, rev, err := sh.st.SaveSession(ctx, s.Since(y.base))
	if err != nil {
		return err
	}
	s.Absorb(merged, y.base)
	y.base, y.rev, y.saved = merged, rev, n
	return nil
}

// saveLogged is save for the paths that answer no call (Observe,
// Approve): a failure is logged, and the change stays counted as unsaved,
// so the session's next Check saves it (or is denied).
func (sh *sharing) saveLogged(ctx context.Context, s *session.Session, after string) {
	if err := sh.save(ctx, s); err != nil {
		sh.log.Error("shared store: the session's state is not saved yet; the session's next call saves it or is denied",
			"after", after, "session", s.ID(), "err", err)
	}
}

// checkShared is Check with a shared store: load, decide, save.
func (h *Host) checkShared(ctx context.Context, g *generation, c Call, s *session.Session) Decision {
	if err := h.shared.load(ctx, s); err != nil {
		d := storeDenied(g, c, h.settings.noTrace, "loading this session's state", err)
		h.shared.logRefused(c, "loading this session's state", err)
		h.recordCheck(ctx, c, s, &d, nil)
		return d
	}
	a := &sharedApprovals{sessionApprovals: sessionApprovals{s}, ctx: ctx, sh: &h.shared, args: c.Arguments}
	if caller := h.callerOf(c.Session); caller != nil {
		a.who = session.Who{Principal: caller.Name, Groups: caller.Groups}
	}
	d, added := h.decideIn(ctx, g, c, s, a)
	if a.err != nil && d.Decision != policy.Allow {
		noteUnconfirmed(&d, a.err, h.settings.noTrace)
		h.shared.log.Warn(`shared store: remembered "always" approvals set aside, the store cannot confirm it is current`,
			"session", c.Session, "server", c.Server, "tool", c.Tool.Name, "err", a.err)
	}
	if err := h.shared.save(ctx, s); err != nil {
		denyUnsaved(&d, h.settings.noTrace, err)
		h.shared.logRefused(c, "saving what this call changed in the session", err)
	}
	h.recordCheck(ctx, c, s, &d, added)
	return d
}

// unreachableWords is the one sentence every store failure ends with.
const unreachableWords = "the call was not made, since nothing is allowed on state that may be stale (another process may have tainted the session or revoked an approval); it is decided again once the store answers"

// unreachableMessage is the reason a refused caller reads. It names no
// store internals (host, port, database, session key): a caller of serve
// learns only that the store is down and the call was not made. The
// cause goes to the host's log and, in the trace, to the audit record.
const unreachableMessage = "the shared store is unreachable: " + unreachableWords

// unreachable is the cause of a store refusal, for the trace (audit) and
// the log: what was being done and the store's error (its URL's password
// hidden by the store).
func unreachable(what string, err error) string {
	return fmt.Sprintf("the shared store is unreachable (%s: %v)", what, err)
}

// logRefused logs the cause of a call refused because the store did not
// answer: the refusal itself says only that the store is unreachable.
func (sh *sharing) logRefused(c Call, what string, err error) {
	sh.log.Error("shared store: a call is refused, the store did not answer; it is decided again once the store answers",
		"session", c.Session, "server", c.Server, "tool", c.Tool.Name, "while", what, "err", err)
}

// storeDenied is the decision on a call whose session could not be
// loaded: deny, before any step of the pipeline ran.
func storeDenied(g *generation, c Call, noTrace bool, what string, err error) Decision {
	app, connector := g.rules.Identity(c.Server, c.Tool)
	d := Decision{
		Decision: policy.Deny, Server: c.Server, App: app, Connector: connector,
		Tool: c.Tool.Name, DefinitionHash: c.Tool.HashHex,
		Reasons: []policy.Reason{{Source: policy.StepStore, Code: policy.CodeStoreUnreachable, Message: unreachableMessage}},
	}
	if !noTrace {
		d.Trace = []policy.Step{{Step: policy.StepStore, Outcome: "deny", Detail: unreachable(what, err)}, {Step: policy.StepDecision, Outcome: "deny"}}
	}
	return d
}

// denyUnsaved turns a decision whose session changes could not be saved
// into a deny: another process would decide the session's next call
// without them.
func denyUnsaved(d *Decision, noTrace bool, err error) {
	d.Decision, d.Rememberable, d.Prompt, d.Scopes = policy.Deny, false, nil, nil
	d.Reasons = append(d.Reasons, policy.Reason{Source: policy.StepStore, Code: policy.CodeStoreUnreachable, Message: unreachableMessage})
	if !noTrace {
		d.Trace = append(d.Trace, policy.Step{Step: policy.StepStore, Outcome: "deny", Detail: unreachable("saving what this call changed in the session", err)}, policy.Step{Step: policy.StepDecision, Outcome: "deny"})
	}
}

// noteUnconfirmed says, in the decision and its prompt, that remembered
// "always" approvals were set aside because the store could not confirm
// it is current.
func noteUnconfirmed(d *Decision, err error, noTrace bool) {
	// The reason and prompt name no store internals (the caller reads
	// them); the error goes to the trace (audit) and the log.
	msg := `remembered "always" approvals were set aside: the shared store cannot confirm it is current`
	d.Reasons = append(d.Reasons, policy.Reason{Source: policy.StepRemembered, Code: policy.CodeRememberedUnconfirmed, Message: msg})
	if d.Prompt != nil {
		p := *d.Prompt // the prompt is the decision's own, but a copy costs nothing here
		p.Message += "; " + msg
		d.Prompt = &p
	}
	if !noTrace {
		d.Trace = append(d.Trace, policy.Step{Step: policy.StepRemembered, Outcome: "set aside", Detail: fmt.Sprintf("%s (%v)", msg, err)})
	}
}

// sharedApprovals is a session's approvals as step 6 reads them with a
// shared store: the session's own, then the store's grants for the
// session's caller and the call's arguments. It lives for one Check.
type sharedApprovals struct {
	sessionApprovals
	ctx  context.Context
	sh   *sharing
	who  session.Who
	args json.RawMessage
	// err is why the store could not answer, when it could not.
	err error
}

func (a *sharedApprovals) Remembered(app, server, connector, tool, hash string) bool {
	if a.RememberedForSession(app, server, connector, tool, hash) {
		return true
	}
	// The pipeline checked the arguments already (an object, no key
	// twice); should they not digest, only grants for any arguments can
	// match.
	digest, _ := session.ArgsDigest(a.args)
	key := session.ApprovalKey{App: app, Server: server, Connector: connector, Tool: tool, Hash: hash}
	ok, err := a.sh.st.Covers(a.ctx, a.who, key, digest)
	if err != nil {
		if !errors.Is(err, session.ErrNotCurrent) {
			err = fmt.Errorf("%w: %v", session.ErrNotCurrent, err)
		}
		a.err = err
		return false
	}
	return ok
}

// AlwaysWhere names the store and whose calls its grant covered, for the
// reason of an allow (internal/policy, remembered_where.go).
func (a *sharedApprovals) AlwaysWhere() (message, detail string) {
	store := "the shared store"
	if a.sh.engine != "" {
		store = "the shared " + a.sh.engine + " store"
	}
	whose := "calls made with no caller (the local front ends: by a local or team grant)"
	if a.who.Principal != "" {
		whose = fmt.Sprintf("calls of %q (by name, group or team)", a.who.Principal)
	}
	return fmt.Sprintf(`approved earlier with "always" (a grant in %s covering %s) for this exact definition`, store, whose),
		fmt.Sprintf(`an "always" grant in %s covers %s for this exact definition`, store, whose)
}

// grantScope is whose calls an "always" approval of a session covers
// when the approver named none: the session caller's own, or, for a
// local front end (no caller), the local front ends' calls only. Not the
// team's: a store a developer's wrap shares with `serve` would otherwise
// open the tool to every one of serve's callers on one local answer.
func (h *Host) grantScope(sessionID string, grant session.GrantScope) (session.GrantScope, error) {
	caller := h.callerOf(sessionID)
	if grant == (session.GrantScope{}) {
		if caller != nil {
			return session.GrantScope{Kind: session.ScopePrincipal, Name: caller.Name}, nil
		}
		return session.GrantScope{Kind: session.ScopeLocal}, nil
	}
	switch {
	case (grant.Kind == session.ScopePrincipal || grant.Kind == session.ScopeGroup) && grant.Name != "",
		grant.Kind == session.ScopeTeam && grant.Name == "":
		return grant, nil
	case grant.Kind == session.ScopeLocal && grant.Name == "":
		if caller != nil {
			return grant, fmt.Errorf("grant scope local: session %q has a caller (%q), whose calls a local grant would not cover; grant principal, group or team", sessionID, caller.Name)
		}
		return grant, nil
	}
	return grant, fmt.Errorf("grant scope %+v: want principal or group with a name, or team or local without one", grant)
}

// grantAlways stores an "always" approval in the shared store.
func (h *Host) grantAlways(key session.ApprovalKey, scope session.GrantScope, by string) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if _, err := h.shared.st.AddGrant(ctx, session.SharedGrant{Key: key, Scope: scope, GrantedBy: by}); err != nil {
		return fmt.Errorf("saving the \"always\" approval of %s/%s in the shared store: %w (nothing was remembered; approve once, or again when the store answers)", key.Server, key.Tool, err)
	}
	return nil
}

// afterApprove saves what an answer changed in the session.
func (h *Host) afterApprove(s *session.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	h.shared.saveLogged(ctx, s, "approve")
}

// approveRecord is the audit record of an answer.
func approveRecord(now time.Time, sessionID string, key *session.ApprovalKey, scope Scope, by *Caller, grant *session.GrantScope) audit.Record {
	r := audit.Record{Time: now, Event: "approve", Session: sessionID, Decision: key, Scope: scope.String(), Grant: grant}
	if by != nil {
		r.By = by.Name
	}
	return r
}

// grantor is who granted an answer: the approver who answered for the
// session, else the session's caller, else "" (a local front end's user).
func grantor(by, caller *Caller) string {
	switch {
	case by != nil:
		return by.Name
	case caller != nil:
		return caller.Name
	}
	return ""
}

// loadForList brings a session in step before its tool list is filtered.
// A failure is logged and the list filtered on the state held: a list
// allows no call, and every call is decided by Check, which is denied
// while the store cannot be read.
func (h *Host) loadForList(ctx context.Context, sessionID string) {
	s := h.sessions.Get(sessionID)
	if err := h.shared.load(ctx, s); err != nil {
		h.shared.log.Error("shared store: listing tools on the session's state as this process holds it; its calls are denied until the store answers",
			"session", sessionID, "err", err)
	}
}
