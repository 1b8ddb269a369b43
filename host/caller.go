package host

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// Caller is who makes a session's calls: a principal's name and its
// groups, as the gateway's authentication found them (a tokens file's
// entry, an OIDC token's claims). Bind it to a session with SetCaller;
// the session's decisions then apply the config's principals, groups and
// approvers to it. Names are compared exactly: "Ops" is not "ops".
type Caller = policy.Caller

// Errors of SetCaller and Approve.
var (
	// ErrCallerRebound: a session is bound to one caller for its life; a
	// request from another caller cannot take it over.
	ErrCallerRebound = errors.New("session belongs to another caller")
	// ErrNotApprover: the session's caller is not among the approvers the
	// config names for the tool, so its answer does not count.
	ErrNotApprover = errors.New("the caller may not approve this call")
)

// callers binds sessions to callers. any says whether one was ever bound,
// so that the local front ends, which bind none, pay one atomic load.
type callers struct {
	any atomic.Bool
	m   sync.Map // session id -> *Caller
}

// SetCaller binds session sessionID to caller c. A session is bound once:
// binding it again to the same caller (the same name and groups, in any
// order) does nothing, and to another fails with ErrCallerRebound, since
// a session cannot change hands. A caller needs a name.
func (h *Host) SetCaller(sessionID string, c Caller) error {
	if c.Name == "" {
		return fmt.Errorf("binding session %q: the caller has no name: authenticate the request before binding its session", sessionID)
	}
	// A gateway binds at every request: the common case, the same caller
	// again, is answered without allocating.
	if prev, ok := h.callers.m.Load(sessionID); ok {
		return sameCaller(sessionID, prev.(*Caller), c)
	}
	bound := &Caller{Name: c.Name, Groups: slices.Clone(c.Groups)}
	slices.Sort(bound.Groups)
	bound.Groups = slices.Compact(bound.Groups)
	prev, loaded := h.callers.m.LoadOrStore(sessionID, bound)
	if !loaded {
		h.callers.any.Store(true)
		return nil
	}
	return sameCaller(sessionID, prev.(*Caller), c)
}

// sameCaller is nil when c is the caller bound (the same name, the same
// set of groups), else the error that refuses c the session.
func sameCaller(sessionID string, bound *Caller, c Caller) error {
	same := bound.Name == c.Name
	for _, g := range c.Groups {
		same = same && slices.Contains(bound.Groups, g)
	}
	for _, g := range bound.Groups {
		same = same && slices.Contains(c.Groups, g)
	}
	if !same {
		return fmt.Errorf("binding session %q to caller %q: %w (%q): start a new session", sessionID, c.Name, ErrCallerRebound, bound.Name)
	}
	return nil
}

// CallerOf returns the caller bound to a session, if any. The groups are
// the caller's own copy, sorted.
func (h *Host) CallerOf(sessionID string) (Caller, bool) {
	if c := h.callerOf(sessionID); c != nil {
		return Caller{Name: c.Name, Groups: slices.Clone(c.Groups)}, true
	}
	return Caller{}, false
}

// callerOf is the session's caller, nil when none is bound. The value is
// shared: never modify it.
func (h *Host) callerOf(sessionID string) *Caller {
	if !h.callers.any.Load() {
		return nil
	}
	if v, ok := h.callers.m.Load(sessionID); ok {
		return v.(*Caller)
	}
	return nil
}

// ApproveBy records an answer to an ask of session sessionID given by
// another than its caller: an approver answering through `serve`'s team
// inbox. by must be an approver for the tool by the decision and by the
// rules in force now; where the config names no approvers, only the
// session's own caller answers its asks. Otherwise ApproveBy fails with
// ErrNotApprover and records nothing. Always, with a shared store, is a
// grant covering grant's calls (the zero GrantScope: the session caller's
// own, or the local front ends' (scope local) when the session has none;
// local is refused for a session with a caller); without a store, grant
// must be zero. The audit record names by.
func (h *Host) ApproveBy(sessionID string, d *Decision, scope Scope, by Caller, grant session.GrantScope) error {
	if by.Name == "" {
		return fmt.Errorf("%w: the approver has no name: authenticate the answer before applying it", ErrNotApprover)
	}
	return h.approve(sessionID, d, scope, &by, grant)
}

// mayApproveAs is Approve's check, for the session's caller (by nil) or
// for the approver by.
func (h *Host) mayApproveAs(sessionID string, d *Decision, by *Caller) error {
	if by == nil {
		return h.mayApprove(sessionID, d)
	}
	rules := h.gen.Load().rules
	if named, _ := rules.ApproverCheck(d.Server, d.Connector, d.Tool, nil); named && d.Approvers == nil {
		// No approvers named, then or now: the asker's own answer only.
		if own := h.callerOf(sessionID); own != nil && own.Name == by.Name {
			return nil
		}
		return fmt.Errorf("%w: %s/%s names no approvers, so only the session's own caller answers its asks, and %q is not it", ErrNotApprover, d.Server, d.Tool, by.Name)
	}
	ok, who := rules.ApproverCheck(d.Server, d.Connector, d.Tool, by)
	if ok && d.MayApprove(*by) {
		return nil
	}
	if who == "" {
		who = strings.Join(d.Approvers, ", ")
	}
	return fmt.Errorf("%w: %s/%s needs approval by %s, and %q is not one of them", ErrNotApprover, d.Server, d.Tool, who, by.Name)
}

// mayApprove is Approve's check: the session's caller (none for the local
// front ends) must be an approver by the decision and by the rules in
// force now (the decision may be old, or changed by its holder). With no
// approvers configured anyone's answer counts.
func (h *Host) mayApprove(sessionID string, d *Decision) error {
	c := h.callerOf(sessionID)
	ok, who := h.gen.Load().rules.ApproverCheck(d.Server, d.Connector, d.Tool, c)
	if ok && (d.Approvers == nil || c != nil && d.MayApprove(*c)) {
		return nil
	}
	if who == "" {
		who = "(none)"
		if len(d.Approvers) > 0 {
			who = strings.Join(d.Approvers, ", ")
		}
	}
	if c == nil {
		return fmt.Errorf("%w: %s/%s needs approval by %s, and this session has no caller (a local front end): approve it through `toolwarden serve` as one of them", ErrNotApprover, d.Server, d.Tool, who)
	}
	return fmt.Errorf("%w: %s/%s needs approval by %s, and %q is not one of them", ErrNotApprover, d.Server, d.Tool, who, c.Name)
}
