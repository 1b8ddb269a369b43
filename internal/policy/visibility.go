package policy

import "github.com/toolwarden/toolwarden/internal/hints"

// CodeHiddenByPlugin is the reason code of a call to a tool that a
// plugin's list event hides from the session (the reason's source names
// the plugin: "plugin:<name>").
const CodeHiddenByPlugin = "hidden_by_plugin"

// VisibleHints is Visible plus the tool's effective hints (after trust,
// drift and config overrides): what the list event shows plugins, so that
// a plugin hides by the same hints it later decides by.
func (r *Rules) VisibleHints(server string, tool *hints.Tool, drifted bool) (bool, Reason, hints.Set) {
	return r.VisibleHintsTo(server, tool, drifted, nil)
}

// VisibleHintsTo is VisibleHints for a caller (nil: no one known), with
// the principal gate after step 3 (principals.go).
func (r *Rules) VisibleHintsTo(server string, tool *hints.Tool, drifted bool, caller *Caller) (bool, Reason, hints.Set) {
	var d Decision
	var s state
	r.prepare(&s, server, tool, drifted, &d)
	s.caller = caller
	ok, reason, _ := s.visibility()
	if ok {
		ok, reason, _, _ = s.principals(false)
	}
	return ok, reason, s.eff
}

// DecideHidden is the decision for a call to a tool that a source outside
// the config (a plugin's list event) hides from the session: denied
// without a prompt, like a tool the visibility gate hides, with why and
// the trace step that names the source. When the gate hides the tool too,
// the gate's reason wins: the config is the first truth.
func (r *Rules) DecideHidden(in *Input, why Reason, step Step) Decision {
	d := Decision{Trace: make([]Step, 0, 4)}
	r.decideHidden(in, why, step, &d)
	return d
}

func (r *Rules) decideHidden(in *Input, why Reason, step Step, d *Decision) {
	var s state
	r.prepare(&s, in.Server, in.Tool, in.Drifted, d)
	s.caller = in.Caller
	d.Trace = append(d.Trace, s.hintsStep(), capsStep(d.Capabilities))
	if ok, reason, gate := s.visibility(); !ok {
		why, step = reason, gate
	} else if ok, reason, gate, _ := s.principals(true); !ok {
		why, step = reason, gate
	}
	d.Trace = append(d.Trace, step, Step{Step: StepDecision, Outcome: "deny", Detail: "hidden tools are never prompted"})
	d.Decision, d.Hidden = Deny, true
	d.Reasons = append(d.Reasons, why)
}
