package host

import (
	"context"
	"slices"
	"sync"

	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// One visibility truth: a tool is callable only when it would be listed to
// the session at that moment. The visibility gate (policy step 3) is
// recomputed by every decision; the plugins' list event is what this file
// adds to Check. Its answers are kept per (session, server, app) as the
// list last shown, and reused by a call only while everything the plugins
// saw of that tool is unchanged: the session's labels, the tool's
// definition hash and whether it drifted from its pin. Otherwise the call
// runs the list event again, over the list as last shown with the called
// tool as it is now (docs/RATIONALE.md, "Hidden by a plugin is denied").
//
// The records belong to a policy generation (reload.go): what one set of
// plugins said of a list says nothing of what the next set will, so a
// Reload starts with none and every session's lists are asked again.

// listKey names one tool list as plugins see it.
type listKey struct{ session, server, app string }

// listOf names one of a session's tool lists.
type listOf struct{ server, app string }

// listRecord is one run of the list event: its input and what each plugin
// made of it. A record is never modified once stored; a new run replaces it.
type listRecord struct {
	labels  []string
	tools   []*Tool
	hints   []hints.Set // effective, index for index with tools
	drifted []bool
	index   map[string]int // tool name -> position in tools
	// verdicts holds the tools a plugin acted on: Deny (hidden) or Ask (a
	// list plugin failed and its on_error is ask). Others are absent.
	verdicts map[string]*listVerdict
}

// listVerdict is what the list event decided for one tool.
type listVerdict struct {
	verdict policy.Verdict
	reason  policy.Reason
	step    policy.Step
	plugin  string // the plugin whose failure asks (Ask only)
	err     error
}

// lists holds the last list record per key, grouped by session so that
// ending a session drops its records at once.
type lists struct {
	mu sync.RWMutex
	m  map[string]map[listOf]*listRecord
}

func (l *lists) get(k listKey) *listRecord {
	l.mu.RLock()
	r := l.m[k.session][listOf{k.server, k.app}]
	l.mu.RUnlock()
	return r
}

func (l *lists) put(k listKey, r *listRecord) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]map[listOf]*listRecord{}
	}
	bySession := l.m[k.session]
	if bySession == nil {
		bySession = map[listOf]*listRecord{}
		l.m[k.session] = bySession
	}
	bySession[listOf{k.server, k.app}] = r
	l.mu.Unlock()
}

func (l *lists) forget(sessionID string) {
	l.mu.Lock()
	delete(l.m, sessionID)
	l.mu.Unlock()
}

// decide is policy.Decide with the list event's verdict for the called tool
// applied first: a tool a plugin hides is denied as hidden, and a tool
// whose list plugin failed with on_error = "ask" gets that plugin's ask at
// step 5.
func (g *generation) decide(ctx context.Context, in *policy.Input) Decision {
	if len(g.listers) > 0 {
		switch v := g.listVerdict(ctx, in); {
		case v == nil:
		case v.verdict == policy.Deny:
			return g.rules.DecideHidden(in, v.reason, v.step)
		case v.verdict == policy.Ask:
			plugins := make([]policy.Checker, 0, len(in.Plugins)+1)
			in.Plugins = append(append(plugins, in.Plugins...), listFailure{name: v.plugin, err: v.err})
		}
	}
	return g.rules.Decide(ctx, in)
}

// listVerdict is the list event's verdict on the called tool for the
// session now: the stored record's when it saw this very tool with these
// labels, else a fresh run. A tool the visibility gate hides gets none
// (Decide says why).
func (g *generation) listVerdict(ctx context.Context, in *policy.Input) *listVerdict {
	app, _ := g.rules.Identity(in.Server, in.Tool)
	key := listKey{in.Session, in.Server, app}
	rec := g.lists.get(key)
	name := in.Tool.Name
	if rec != nil {
		if i, ok := rec.index[name]; ok && rec.tools[i].HashHex == in.Tool.HashHex &&
			rec.drifted[i] == in.Drifted && slices.Equal(rec.labels, in.Labels) {
			return rec.verdicts[name]
		}
	}
	ok, _, eff := g.rules.VisibleHintsTo(in.Server, in.Tool, in.Drifted, in.Caller)
	if !ok {
		return nil
	}
	// The list as last shown, with the called tool as it is now.
	var tools []*Tool
	var effs []hints.Set
	var drifts []bool
	at := -1
	if rec != nil {
		tools = slices.Clone(rec.tools)
		effs = slices.Clone(rec.hints)
		drifts = slices.Clone(rec.drifted)
		if i, ok := rec.index[name]; ok {
			at = i
		}
	}
	if at < 0 {
		tools, effs, drifts = append(tools, in.Tool), append(effs, eff), append(drifts, in.Drifted)
	} else {
		tools[at], effs[at], drifts[at] = in.Tool, eff, in.Drifted
	}
	return g.runList(ctx, key, in.Labels, tools, effs, drifts).verdicts[name]
}

// runList runs every list plugin over one app's tools, stores the record
// and returns it. A plugin that fails applies its on_error to every tool
// it could have hidden: deny hides them, ask leaves them listed and asks
// at call time, abstain leaves them alone.
func (g *generation) runList(ctx context.Context, key listKey, labels []string, tools []*Tool, effs []hints.Set, drifts []bool) *listRecord {
	rec := &listRecord{labels: labels, tools: tools, hints: effs, drifted: drifts, index: make(map[string]int, len(tools))}
	for i, t := range tools {
		rec.index[t.Name] = i
	}
	in := policy.ListInput{Session: key.session, Labels: labels, Server: key.server, App: key.app, Tools: tools, Hints: effs}
	for _, l := range g.listers {
		names, err := l.List(ctx, &in)
		if err != nil {
			v := listOnError(l)
			if v == policy.Abstain {
				continue
			}
			for _, t := range tools {
				if !listMayHide(l, key.app, t.Name) {
					continue
				}
				if v == policy.Deny {
					rec.mark(t.Name, &listVerdict{verdict: policy.Deny,
						reason: policy.Reason{Source: policy.StepPlugin + ":" + l.Name(), Code: policy.CodePluginError,
							Message: "the list event of plugin " + l.Name() + " failed (" + err.Error() + "), and its on_error deny hides the tools it could hide"},
						step: policy.Step{Step: policy.StepVisibility, Outcome: "hidden", Source: policy.StepPlugin + ":" + l.Name(), Detail: "list failed, on_error deny: " + err.Error()}})
				} else {
					rec.mark(t.Name, &listVerdict{verdict: policy.Ask, plugin: l.Name(), err: err})
				}
			}
			continue
		}
		for _, n := range names {
			if _, listed := rec.index[n]; !listed {
				continue // names not in the input are ignored (ABI 5.4)
			}
			rec.mark(n, &listVerdict{verdict: policy.Deny,
				reason: policy.Reason{Source: policy.StepPlugin + ":" + l.Name(), Code: policy.CodeHiddenByPlugin,
					Message: "plugin " + l.Name() + " hides this tool from the session (its list event)"},
				step: policy.Step{Step: policy.StepVisibility, Outcome: "hidden", Source: policy.StepPlugin + ":" + l.Name(), Detail: "hidden by the plugin's list event"}})
		}
	}
	g.lists.put(key, rec)
	return rec
}

// mark records v for a tool: the first hide wins, and a hide beats an ask.
func (r *listRecord) mark(name string, v *listVerdict) {
	if r.verdicts == nil {
		r.verdicts = map[string]*listVerdict{}
	}
	if old, ok := r.verdicts[name]; ok && old.verdict >= v.verdict {
		return
	}
	r.verdicts[name] = v
}

// listOnError is a lister's on_error verdict; a Go plugin that does not say
// fails closed.
func listOnError(l policy.Lister) policy.Verdict {
	if o, ok := l.(interface{ OnError() policy.Verdict }); ok {
		return o.OnError()
	}
	return policy.Deny
}

// listMayHide reports whether a lister may hide a tool of app (its tools
// globs); a Go plugin that does not say may hide any.
func listMayHide(l policy.Lister, app, tool string) bool {
	if m, ok := l.(interface{ Matches(app, tool string) bool }); ok {
		return m.Matches(app, tool)
	}
	return true
}

// listFailure is a list plugin that failed with on_error = "ask", as a
// step-5 plugin of the call: its ask combines with the others (and turns
// into a deny where approval_policy says so).
type listFailure struct {
	name string
	err  error
}

func (f listFailure) Name() string                  { return f.name }
func (f listFailure) Matches(app, tool string) bool { return true }
func (f listFailure) CanApprove() bool              { return false }
func (f listFailure) Check(context.Context, *policy.CheckInput) policy.PluginVerdict {
	return policy.PluginVerdict{Verdict: policy.Ask, Code: policy.CodePluginError,
		Reason: "the list event failed (" + f.err.Error() + "), and its on_error is ask", Err: f.err}
}

// filterListed is Filter with list plugins: the gate first, then each
// app's remaining tools through the list event (one run per app, as the
// plugins' apps globs are matched per app), in the server's order. What
// the plugins said is stored for the session's later calls.
func (gen *generation) filterListed(ctx context.Context, s *session.Session, caller *Caller, server string, tools []*Tool) []*Tool {
	type group struct {
		tools  []*Tool
		effs   []hints.Set
		drifts []bool
	}
	var apps []string
	groups := map[string]*group{}
	passed := make([]*Tool, 0, len(tools))
	for _, t := range tools {
		pinned, seen := s.Pinned(server, t.Name)
		drifted := seen && pinned != t.HashHex
		ok, _, eff := gen.rules.VisibleHintsTo(server, t, drifted, caller)
		if !ok {
			continue
		}
		passed = append(passed, t)
		app, _ := gen.rules.Identity(server, t)
		g := groups[app]
		if g == nil {
			g = &group{}
			groups[app] = g
			apps = append(apps, app)
		}
		g.tools, g.effs, g.drifts = append(g.tools, t), append(g.effs, eff), append(g.drifts, drifted)
	}
	labels := s.Labels()
	hidden := map[*Tool]bool{}
	for _, app := range apps {
		g := groups[app]
		rec := gen.runList(ctx, listKey{s.ID(), server, app}, labels, g.tools, g.effs, g.drifts)
		for _, t := range g.tools {
			if v := rec.verdicts[t.Name]; v != nil && v.verdict == policy.Deny {
				hidden[t] = true
			}
		}
	}
	out := passed[:0]
	for _, t := range passed {
		if !hidden[t] {
			out = append(out, t)
		}
	}
	return out
}
