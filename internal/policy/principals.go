package policy

import (
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
)

// Who may see and call a tool, and whose approval counts: the principals,
// groups and approvers keys of [apps.<id>] and [apps.<id>.tools.<tool>]
// (and an admin's requirements). Every level that sets a rule must admit
// the caller, so a tool's rule narrows its app's and never widens it. The
// gate runs right after the visibility gate (step 3): a tool a caller may
// not call is hidden from that caller, before any approval, remembered or
// not, is looked at.

// Caller is who makes a call: the principal's name and groups as the
// gateway's authentication found them. Names are compared exactly, byte
// for byte: "Ops" is not "ops", and "ops " is neither.
type Caller struct {
	Name   string
	Groups []string
}

// Reason codes of this file.
const (
	// CodePrincipalNotAllowed: the tool is restricted to principals or
	// groups the caller is not one of (or no caller is known).
	CodePrincipalNotAllowed = "principal_not_allowed"
	// CodeApproverRequired: the tool's asks count only when an approver
	// answers, and no approver can be asked here.
	CodeApproverRequired = "approver_required"
)

// Step names of this file's trace lines.
const (
	StepPrincipals = "principals"
	StepApprovers  = "approvers"
)

// accessRule is one level's principals, groups and approvers, compiled.
type accessRule struct {
	principals, groups []string
	restricts          bool
	approvers          []string // nil: not set at this level
	src                string   // the table's key path, for the trace
}

// admits reports whether the rule lets c see and call the tool. With no
// caller (c nil) a restricting rule admits no one: the local front ends
// know of no principal, and a restricted tool fails closed there.
func (a *accessRule) admits(c *Caller) bool {
	if !a.restricts {
		return true
	}
	if c == nil {
		return false
	}
	if c.Name != "" && slices.Contains(a.principals, c.Name) {
		return true
	}
	for _, g := range c.Groups {
		if g != "" && slices.Contains(a.groups, g) {
			return true
		}
	}
	return false
}

// describe says whom the rule admits, in plain words.
func (a *accessRule) describe() string {
	var parts []string
	if a.principals != nil {
		parts = append(parts, "principals "+listOrNone(a.principals))
	}
	if a.groups != nil {
		parts = append(parts, "groups "+listOrNone(a.groups))
	}
	return strings.Join(parts, " or ")
}

func listOrNone(vs []string) string {
	if len(vs) == 0 {
		return "(none)"
	}
	return strings.Join(vs, ", ")
}

// mayApprove reports whether c is one of approvers: a principal by name,
// or a member of a "group:<name>" entry. A caller whose name is written
// like a group entry matches nothing by it: a name is never a group.
func mayApprove(approvers []string, c *Caller) bool {
	if c == nil {
		return false
	}
	for _, e := range approvers {
		if g, ok := strings.CutPrefix(e, config.GroupPrefix); ok {
			if g != "" && slices.Contains(c.Groups, g) {
				return true
			}
		} else if c.Name != "" && e == c.Name {
			return true
		}
	}
	return false
}

// MayApprove reports whether c's approval counts for this decision's ask:
// true when the config names no approvers for the tool, else when c is an
// approver at every level (app and tool) that names some.
func (d *Decision) MayApprove(c Caller) bool {
	if d.approverLevels != nil {
		return MayApproveLevels(*d.approverLevels, c)
	}
	return d.Approvers == nil || mayApprove(d.Approvers, &c)
}

// ApproverLevels returns whose approval counts for the decision's ask, one
// list per level (app, tool, requirements) that names approvers, outer
// first; an approver must be in every list. Nil when the config names none.
// The lists are the caller's own copies: the team inbox stores them with
// an ask, so that another replica can check an answerer (MayApproveLevels).
func (d *Decision) ApproverLevels() [][]string {
	switch {
	case d.approverLevels != nil:
		all := make([][]string, len(*d.approverLevels))
		for i, l := range *d.approverLevels {
			all[i] = slices.Clone(l)
		}
		return all
	case d.Approvers != nil:
		return [][]string{slices.Clone(d.Approvers)}
	}
	return nil
}

// MayApproveLevels reports whether c is an approver at every level of
// levels (as ApproverLevels gives them): a principal by name, or a member
// of a "group:<name>" entry. With no levels it is true, as MayApprove is
// when the config names no approvers; whoever holds stored levels decides
// what no levels means there (the team inbox: only the asker answers).
func MayApproveLevels(levels [][]string, c Caller) bool {
	for _, level := range levels {
		if !mayApprove(level, &c) {
			return false
		}
	}
	return true
}

// compileAccess compiles app a's rules (its table's, each tool's, and
// requirements') into ar, whose tools are already compiled.
func (r *Rules) compileAccess(cfg *config.Config, p string, a *config.App, ar *appRules) {
	if !a.Access.Empty() {
		ar.access = append(ar.access, newAccessRule(cfg, p, &a.Access))
	}
	for name, t := range a.Tools {
		if !t.Access.Empty() {
			rule := newAccessRule(cfg, p+".tools."+quoteKey(name), &t.Access)
			ar.tools[name].access = &rule
			r.anyAccess = true
		}
	}
	for _, req := range a.RequiredAccess {
		rule := newAccessRule(cfg, req.Path, &req.Access)
		rule.src = req.Path + ", required by " + req.At.String()
		if req.Tool == "" {
			ar.access = append(ar.access, rule)
			continue
		}
		if ar.toolAccess == nil {
			ar.toolAccess = map[string][]accessRule{}
		}
		ar.toolAccess[req.Tool] = append(ar.toolAccess[req.Tool], rule)
	}
	if len(ar.access) > 0 || len(ar.toolAccess) > 0 {
		r.anyAccess = true
	}
}

func newAccessRule(cfg *config.Config, path string, a *config.Access) accessRule {
	return accessRule{principals: a.Principals, groups: a.Groups, restricts: a.Restricts(),
		approvers: a.Approvers, src: required(cfg, path)}
}

// eachAccess calls f with every rule that applies to the call, outer
// levels first (each app's, then its tool's), until f returns false.
func (s *state) eachAccess(f func(*accessRule) bool) {
	for i := 0; i < s.nApps; i++ {
		a := s.apps[i]
		for j := range a.access {
			if !f(&a.access[j]) {
				return
			}
		}
		if tr := s.toolRules[i]; tr != nil && tr.access != nil && !f(tr.access) {
			return
		}
		for j, rules := 0, a.toolAccess[s.tool.Name]; j < len(rules); j++ {
			if !f(&rules[j]) {
				return
			}
		}
	}
}

// principals is the principal gate: does every rule that restricts the
// tool admit the caller? ran is false when no rule restricts it (then
// nothing is traced, and existing traces read as before). The step of an
// admitted caller is built only when traced.
func (s *state) principals(traced bool) (ok bool, reason Reason, step Step, ran bool) {
	if !s.r.anyAccess {
		return true, Reason{}, Step{}, false
	}
	ok = true
	var buf [4]string
	passed := buf[:0]
	var refused *accessRule
	s.eachAccess(func(a *accessRule) bool {
		if !a.restricts {
			return true
		}
		ran = true
		if !a.admits(s.caller) {
			refused, ok = a, false
			return false
		}
		passed = append(passed, a.src)
		return true
	})
	if !ran {
		return true, Reason{}, Step{}, false
	}
	if ok {
		if !traced {
			return true, Reason{}, Step{}, true
		}
		return true, Reason{}, Step{Step: StepPrincipals, Outcome: "allowed", Source: passed[len(passed)-1],
			Detail: callerWords(s.caller) + " is admitted by " + strings.Join(passed, " and ")}, true
	}
	msg := "only " + refused.describe() + " may see and call this tool (" + refused.src + "); "
	if s.caller == nil {
		msg += "no caller is known here: local front ends (wrap, proxy, hooks, sdk) have none, so a restricted tool is hidden and denied there; call it through `toolwarden serve` as one of them"
	} else {
		msg += callerWords(s.caller) + " is not one of them"
	}
	return false, Reason{Source: StepPrincipals, Code: CodePrincipalNotAllowed, Message: msg, RequiredBy: requiredBy(refused.src)},
		Step{Step: StepPrincipals, Outcome: "hidden", Source: refused.src, Detail: msg}, true
}

// callerWords names a caller for people.
func callerWords(c *Caller) string {
	if c == nil {
		return "no caller"
	}
	s := "caller " + c.Name
	if len(c.Groups) > 0 {
		s += " (groups " + strings.Join(c.Groups, ", ") + ")"
	} else {
		s += " (no groups)"
	}
	return s
}

// approvers records on d whose approval counts for the tool, and decides
// what an ask becomes: with a caller, the ask stays an ask (the front end
// knows the caller, and refuses or routes an answer it may not give: see
// Decision.MayApprove); with none (a local front end), no approver can be
// asked, so the ask is a deny that says who may approve.
func (s *state) approvers(in *Input, d *Decision) {
	var buf [4][]string
	levels := buf[:0]
	src := ""
	s.eachAccess(func(a *accessRule) bool {
		if a.approvers != nil {
			levels, src = append(levels, a.approvers), a.src
		}
		return true
	})
	if len(levels) == 0 {
		return
	}
	// Copies: the rules are shared by every decision, and a Decision's
	// holder may write into its slices.
	d.Approvers = slices.Clone(levels[len(levels)-1])
	if len(levels) > 1 {
		all := make([][]string, len(levels))
		for i, l := range levels {
			all[i] = slices.Clone(l)
		}
		d.approverLevels = &all
	}
	if d.Decision != Ask || s.caller != nil && in.NoTrace {
		return
	}
	who := approverWords(levels)
	switch {
	case s.caller == nil:
		msg := "asks of this tool count only when approved by " + who + " (" + src + "), and no approver can be asked here: a local front end has no caller; approve it through `toolwarden serve` as one of them"
		d.Decision = Deny
		d.Reasons = append(d.Reasons, Reason{Source: StepApprovers, Code: CodeApproverRequired, Message: msg, RequiredBy: requiredBy(src)})
		if !in.NoTrace {
			d.Trace = append(d.Trace, Step{Step: StepApprovers, Outcome: "deny", Source: src, Detail: msg})
		}
	case !in.NoTrace:
		detail := callerWords(s.caller) + " may approve"
		if !d.MayApprove(*s.caller) {
			detail = "needs approval by " + who + ": " + callerWords(s.caller) + " may not approve"
		}
		d.Trace = append(d.Trace, Step{Step: StepApprovers, Outcome: "ask", Source: src, Detail: detail})
	}
}

// approverWords says who may approve: one level's list, or each level's
// joined by "and" (an approver must be in every one).
func approverWords(levels [][]string) string {
	parts := make([]string, len(levels))
	for i, l := range levels {
		parts[i] = listOrNone(l)
		if len(levels) > 1 && len(l) > 1 {
			parts[i] = "(one of " + parts[i] + ")"
		}
	}
	return strings.Join(parts, " and ")
}

// ApproverCheck reports whether c's approval counts for a call to tool of
// server (connector as the call named it) under these rules, and if not,
// who may approve. It reads the rules by the tool's name only (a rule
// keyed by a tool's title is on the Decision: see MayApprove), so callers
// check both; host.Approve does.
func (r *Rules) ApproverCheck(server, connector, tool string, c *Caller) (ok bool, who string) {
	if !r.anyAccess {
		return true, ""
	}
	var s state
	var d Decision
	r.prepare(&s, server, &hints.Tool{Name: tool, ConnectorID: connector}, false, &d)
	var levels [][]string
	ok = true
	s.eachAccess(func(a *accessRule) bool {
		if a.approvers != nil {
			levels = append(levels, a.approvers)
			ok = ok && mayApprove(a.approvers, c)
		}
		return true
	})
	if ok {
		return true, ""
	}
	return false, approverWords(levels)
}
