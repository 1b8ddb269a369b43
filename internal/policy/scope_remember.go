package policy

// Scoped approvals: a plugin that asks because of arguments may propose
// scopes with its ask; the prompt then offers OptionAllowSessionScoped, and
// a later call of the same definition is allowed without asking when every
// ask it raises is one a remembered scope covers. The rule, precisely:
//
//   - An ask is scopable when it names the arguments it is about
//     (PluginVerdict.Arguments) and proposes a scope for each of them.
//   - The scoped option is offered when the decision is an ask that cannot
//     be remembered, the baseline (steps 1-4) does not forbid remembering
//     (approval mode prompt or writes ask every call: no answer may cover
//     another), every plugin ask that forbids remembering is scopable, and
//     the prompt shows every argument it decides on.
//   - A later ask is lifted under the same conditions when one answer (one
//     grant) holds, for every plugin ask that forbids remembering and each
//     argument it names, a scope of that plugin, that reason code and that
//     argument, bound to this exact definition, that the call's value
//     matches. Scopes of separate answers never combine: each answer was
//     a judgement of the calls inside all of its scopes at once.
//     Rememberable asks of the same call (the baseline's auto ask, a plugin
//     ask with remember) are lifted with it: an unscoped session approval
//     would have lifted them anyway. A deny is never lifted.

// CodeRememberedScope is the reason of an ask lifted by a scoped approval.
const CodeRememberedScope = "remembered_scope"

// OptionAllowSessionScoped remembers an approval for this session, for
// calls inside the proposed scopes only.
const OptionAllowSessionScoped = "allow_session_scoped"

// ProposedScope is a scope and the plugin ask it came with.
type ProposedScope struct {
	// Plugin is the [policies.<name>] key of the plugin that asked.
	Plugin string `json:"plugin"`
	// Code is the reason code of its ask.
	Code string `json:"code"`
	Scope
}

// ScopedApprovals is what Input.Approvals may also implement: approvals a
// human scoped to arguments, for one exact definition.
type ScopedApprovals interface {
	// EachScope calls f with each scoped approval of the definition until
	// f returns false. grant tells answers apart: the scopes one answer
	// approved share it.
	EachScope(app, server, connector, tool, hash string, f func(grant uint64, plugin, code string, s Scope) bool)
}

// scopedAsk is a plugin ask that forbade remembering, as the pipeline
// keeps it for step 6.
type scopedAsk struct {
	plugin, code string
	args         []string // JSON pointers, at least one when scopable
	scopes       []Scope
	scopable     bool
}

// noteUnremembered records a plugin ask that forbade remembering.
func (d *Decision) noteUnremembered(plugin, code string, v *PluginVerdict) {
	a := scopedAsk{plugin: plugin, code: code, scopes: v.Scopes}
	for _, name := range v.Arguments {
		a.args = append(a.args, ArgumentPointer(name))
	}
	a.scopable = len(a.args) > 0 && v.Err == nil
	for _, arg := range a.args {
		if !hasScopeFor(v.Scopes, arg) {
			a.scopable = false
		}
	}
	d.unremembered = append(d.unremembered, a)
}

func hasScopeFor(scopes []Scope, arg string) bool {
	for i := range scopes {
		if scopes[i].Arg == arg {
			return true
		}
	}
	return false
}

// scopable reports whether a scoped approval may answer or lift this ask.
func (d *Decision) scopable() bool {
	if d.Decision != Ask || d.Rememberable || d.baseForbids || len(d.unremembered) == 0 {
		return false
	}
	for i := range d.unremembered {
		if !d.unremembered[i].scopable {
			return false
		}
	}
	return true
}

// offerScopes sets d.Scopes to what the scoped option would remember.
func (d *Decision) offerScopes() {
	d.Scopes = d.Scopes[:0]
	for _, a := range d.unremembered {
		for _, s := range a.scopes {
			if containsArg(a.args, s.Arg) {
				d.Scopes = append(d.Scopes, ProposedScope{Plugin: a.plugin, Code: a.code, Scope: s})
			}
		}
	}
}

func containsArg(args []string, arg string) bool {
	for _, a := range args {
		if a == arg {
			return true
		}
	}
	return false
}

// liftScoped is step 6 for scoped approvals.
func (d *Decision) liftScoped(in *Input) {
	if !d.scopable() {
		return
	}
	sa, ok := in.Approvals.(ScopedApprovals)
	if !ok {
		return
	}
	var held []grantedScope
	sa.EachScope(d.App, d.Server, d.Connector, d.Tool, d.DefinitionHash, func(grant uint64, plugin, code string, s Scope) bool {
		held = append(held, grantedScope{grant, plugin, code, s})
		return true
	})
	for i := range held {
		if i > 0 && held[i].grant == held[i-1].grant {
			continue // each grant is tried once (a grant's scopes are adjacent)
		}
		if detail, ok := d.covers(held, held[i].grant, in); ok {
			d.Decision = Allow
			d.Reasons = append(d.Reasons[:0], Reason{Source: StepRemembered, Code: CodeRememberedScope,
				Message: "approved earlier in this session for this definition, for " + detail})
			d.Trace = append(d.Trace, Step{Step: StepRemembered, Outcome: "allow",
				Detail: "scoped session approval matches definition " + shortHash(d.DefinitionHash) + " (" + detail + ")"})
			return
		}
	}
}

// grantedScope is one remembered scope and the answer that granted it.
type grantedScope struct {
	grant        uint64
	plugin, code string
	s            Scope
}

// covers reports whether the scopes of one grant cover every argument of
// every ask that forbade remembering, and says which scopes did.
func (d *Decision) covers(held []grantedScope, grant uint64, in *Input) (string, bool) {
	detail := ""
	for _, a := range d.unremembered {
		for _, arg := range a.args {
			found := ""
			for _, h := range held {
				if h.grant == grant && h.plugin == a.plugin && h.code == a.code && h.s.Arg == arg && h.s.Match(in.Arguments, in.Context) {
					found = h.s.Describe()
					break
				}
			}
			if found == "" {
				return "", false
			}
			if detail != "" {
				detail += "; "
			}
			detail += a.plugin + ": " + found
		}
	}
	return detail, true
}
