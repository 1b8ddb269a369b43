package policy

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
)

// Approvals answers step 6: does the session hold a remembered approval for
// this exact (app, server, connector, tool, definition hash)?
type Approvals interface {
	Remembered(app, server, connector, tool, hash string) bool
}

// Input is one call as the pipeline sees it.
type Input struct {
	Session   string
	Server    string
	Tool      *hints.Tool
	Arguments json.RawMessage
	// Labels are the session's labels at the time of the call.
	Labels []string
	// Drifted is true when the tool's definition differs from its pin.
	Drifted bool
	// Approvals may be nil (nothing remembered).
	Approvals Approvals
	// Plugins run in order at step 5; each applies only where it matches.
	Plugins []Checker
	// Context is what is known of the server's paths (for plugins); nil
	// when nothing is.
	Context *ServerContext
	// State holds the session's plugin states (for stateful plugins); nil
	// when there is none.
	State StateStore
	// NoTrace leaves Decision.Trace empty, for callers that never show it:
	// the steps' strings are then not built at all.
	NoTrace bool
	// Caller is who makes the call; nil when no one is known (the local
	// front ends): a tool restricted to principals or groups is then
	// hidden (principals.go).
	Caller *Caller
}

// Step names, in pipeline order.
const (
	StepHints          = "hints"
	StepCapabilities   = "capabilities"
	StepVisibility     = "visibility"
	StepArguments      = "arguments"
	StepApprovalMode   = "approval_mode"
	StepPlugin         = "plugin"
	StepRemembered     = "remembered"
	StepApprovalPolicy = "approval_policy"
	StepDecision       = "decision"
)

// Identity resolves which app a call belongs to. A server configured with
// connectors = true may name a per-tool app through _meta.connector_id; no
// other server can claim one.
func (r *Rules) Identity(server string, tool *hints.Tool) (app, connector string) {
	if s, ok := r.servers[server]; ok && s.connectors && tool.ConnectorID != "" {
		return tool.ConnectorID, tool.ConnectorID
	}
	return server, ""
}

// trustFor returns the trust level for a call: the connector app's, the
// server app's, the server's, then _default's, then pinned.
func (r *Rules) trustFor(apps []*appRules, srv *serverRules) (hints.Trust, string) {
	for _, a := range apps {
		if a.hasTrust {
			return a.trust, a.trustSrc
		}
	}
	if srv != nil && srv.hasTrust {
		return srv.trust, srv.trustSrc
	}
	if r.def.hasTrust {
		return r.def.trust, r.def.trustSrc
	}
	return hints.Pinned, "default"
}

// state carries one evaluation through the steps.
type state struct {
	r         *Rules
	server    *serverRules
	apps      [2]*appRules // connector app (if any), then server app
	nApps     int
	tool      *hints.Tool
	toolRules [2]*toolRules // per app, may be nil
	eff       hints.Set
	notes     hints.Notes
	trust     hints.Trust
	trustSrc  string
	// cx are the hints Codex reads (codexHints), computed on first use;
	// codexAsks records whether Codex's own verdict asks (step 4).
	cx        hints.Set
	cxDone    bool
	codexAsks bool
	// caller is who makes the call (nil: no one known).
	caller *Caller
}

func (r *Rules) prepare(s *state, server string, tool *hints.Tool, drifted bool, d *Decision) {
	*s = state{r: r, server: r.servers[server], tool: tool}
	app, connector := r.Identity(server, tool)
	d.Server, d.App, d.Connector, d.Tool, d.DefinitionHash = server, app, connector, tool.Name, tool.HashHex
	if connector != "" {
		s.apps[0] = r.app(connector)
		s.apps[1] = r.app(server)
		s.nApps = 2
	} else {
		s.apps[0] = r.app(server)
		s.nApps = 1
	}
	var overrides [4]*hints.Set
	n := 0
	// Server-wide overrides first, then connector, then per-tool: most specific wins.
	for i := s.nApps - 1; i >= 0; i-- {
		a := s.apps[i]
		if a.hints != nil {
			overrides[n] = a.hints
			n++
		}
	}
	for i := s.nApps - 1; i >= 0; i-- {
		a := s.apps[i]
		if a.tools == nil {
			continue
		}
		tr := a.tools[tool.Name]
		if tr == nil && tool.Title != "" {
			tr = a.tools[tool.Title]
		}
		s.toolRules[i] = tr
		if tr != nil && tr.hints != nil {
			overrides[n] = tr.hints
			n++
		}
	}
	s.trust, s.trustSrc = r.trustFor(s.apps[:s.nApps], s.server)
	s.eff, s.notes = hints.Effective(&tool.Declared, s.trust, drifted, overrides[:n]...)
	d.Hints = s.eff
	d.Capabilities = s.eff.Capabilities()
}

// Visible runs steps 1-3 only: is the tool listed at all? It is what a proxy
// uses to filter tools/list. It knows no caller: see VisibleTo.
func (r *Rules) Visible(server string, tool *hints.Tool, drifted bool) (bool, Reason) {
	return r.VisibleTo(server, tool, drifted, nil)
}

// VisibleTo is Visible for a caller (nil: no one known), with the
// principal gate after step 3.
func (r *Rules) VisibleTo(server string, tool *hints.Tool, drifted bool, caller *Caller) (bool, Reason) {
	var d Decision
	var s state
	r.prepare(&s, server, tool, drifted, &d)
	s.caller = caller
	ok, reason, _ := s.visibility()
	if ok {
		ok, reason, _, _ = s.principals(false)
	}
	return ok, reason
}

// Decide runs the whole pipeline for one call. It does no I/O of its own;
// plugins are called through the Checker interface.
func (r *Rules) Decide(ctx context.Context, in *Input) Decision {
	var d Decision
	traced := !in.NoTrace
	if traced {
		// Every step of a decision with up to two plugins.
		d.Trace = make([]Step, 0, 9)
	}
	r.decide(ctx, in, &d)
	return d
}

// decide runs the pipeline into d.
func (r *Rules) decide(ctx context.Context, in *Input, d *Decision) {
	traced := !in.NoTrace
	var s state
	r.prepare(&s, in.Server, in.Tool, in.Drifted, d)
	s.caller = in.Caller
	if traced {
		d.Trace = append(d.Trace, s.hintsStep(), capsStep(d.Capabilities))
	}

	// Step 3: visibility, then who may see the tool (principals.go).
	ok, reason, step := s.visibility()
	if traced {
		d.Trace = append(d.Trace, step)
	}
	if ok && r.anyAccess {
		var ran bool
		if ok, reason, step, ran = s.principals(traced); ran && traced {
			d.Trace = append(d.Trace, step)
		}
	}
	if !ok {
		d.Decision, d.Hidden = Deny, true
		d.Reasons = append(d.Reasons, reason)
		if traced {
			d.Trace = append(d.Trace, Step{Step: StepDecision, Outcome: "deny", Detail: "hidden tools are never prompted"})
		}
		return
	}

	// Arguments every reader agrees on, or none at all.
	if err := CheckArguments(in.Arguments); err != nil {
		d.Decision = Deny
		d.Reasons = append(d.Reasons, Reason{Source: StepArguments, Code: CodeInvalidArguments, Message: err.Error()})
		if traced {
			d.Trace = append(d.Trace, Step{Step: StepArguments, Outcome: "invalid", Detail: err.Error()},
				Step{Step: StepDecision, Outcome: "deny"})
		}
		return
	}

	// Step 4: baseline approval.
	mode, modeSrc := s.mode()
	base, rememberable, code, say, msg, modeSrc, mode := s.floorBaseline(mode, modeSrc)
	msg += requiredNote(modeSrc)
	say += requiredNote(modeSrc)
	d.Mode = mode
	if traced {
		d.Trace = append(d.Trace, Step{Step: StepApprovalMode, Outcome: base.String(), Source: modeSrc, Detail: msg})
	}
	d.Decision, d.Rememberable = base, rememberable
	d.Reasons = append(d.Reasons, Reason{Source: StepApprovalMode, Code: code, Message: say, RequiredBy: requiredBy(modeSrc)})

	// Step 5: plugins.
	if len(in.Plugins) > 0 {
		r.runPlugins(ctx, in, d)
	}

	// Step 6: remembered approvals.
	if d.Decision == Ask && d.Rememberable && in.Approvals != nil &&
		in.Approvals.Remembered(d.App, d.Server, d.Connector, d.Tool, d.DefinitionHash) {
		d.Decision = Allow
		msg, detail := rememberedWhere(in.Approvals, d)
		d.Reasons = append(d.Reasons[:0], Reason{Source: StepRemembered, Code: CodeRemembered, Message: msg})
		if traced {
			d.Trace = append(d.Trace, Step{Step: StepRemembered, Outcome: "allow", Detail: detail})
		}
	}
	if d.Decision == Ask && in.Approvals != nil {
		d.liftScoped(in) // scope_remember.go
	}

	// Step 7: approval_policy; then whose approval counts.
	r.approvalPolicy(&s, in, d)
	if r.anyAccess {
		s.approvers(in, d) // principals.go
	}

	if d.Decision == Ask {
		d.Prompt = s.prompt(d, in.Arguments)
	} else {
		d.Rememberable = false
	}
	if !traced {
		d.Trace = nil // a step appended by a rarer path stays unseen too
		return
	}
	d.Trace = append(d.Trace, Step{Step: StepDecision, Outcome: d.Decision.String()})
}

func (s *state) hintsStep() Step {
	st := Step{Step: StepHints, Outcome: trustOutcome[s.trust], Source: s.trustSrc}
	switch {
	case s.notes.Distrusted:
		st.Detail = "definition drifted from its pin: relaxing hints ignored until approved"
	case s.notes.Ignored > 0:
		st.Detail = "relaxing hints ignored (trust none)"
	}
	if s.notes.Conflict {
		if st.Detail != "" {
			st.Detail += "; "
		}
		st.Detail += "readOnlyHint=true with destructiveHint=true counts as destructive"
	}
	if s.notes.Overridden > 0 {
		if st.Detail != "" {
			st.Detail += "; "
		}
		st.Detail += "config overrides applied"
	}
	return st
}

// trustOutcome spells each trust level once so tracing allocates nothing.
var trustOutcome = [...]string{hints.Pinned: "trust pinned", hints.Full: "trust full", hints.None: "trust none"}

func capsStep(c hints.Capabilities) Step {
	return Step{Step: StepCapabilities, Outcome: capsOutcome[b2i(c.ReadsPrivateData)|b2i(c.SeesUntrustedContent)<<1|b2i(c.CanExfiltrate)<<2]}
}

// capsOutcome spells every combination once so tracing allocates nothing.
var capsOutcome = [8]string{
	"none",
	"reads_private_data",
	"sees_untrusted_content",
	"reads_private_data sees_untrusted_content",
	"can_exfiltrate",
	"reads_private_data can_exfiltrate",
	"sees_untrusted_content can_exfiltrate",
	"reads_private_data sees_untrusted_content can_exfiltrate",
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// visibility is step 3, in Codex's order, first match wins.
func (s *state) visibility() (bool, Reason, Step) {
	hide := func(src, msg string) (bool, Reason, Step) {
		msg += requiredNote(src)
		return false, Reason{Source: StepVisibility, Code: CodeBlockedByAppConfig, Message: msg, RequiredBy: requiredBy(src)},
			Step{Step: StepVisibility, Outcome: "hidden", Source: src, Detail: msg}
	}
	for i := 0; i < s.nApps; i++ {
		if a := s.apps[i]; !a.enabled && !s.inheritsDefault(i) {
			return hide(a.enabledSrc, "app is disabled")
		}
	}
	if srv := s.server; srv != nil {
		if !srv.enabled {
			return hide(srv.enabledSrc, "server is disabled")
		}
		if srv.enabledTools != nil && !srv.enabledTools[s.tool.Name] {
			return hide(srv.enabledToolsSrc, "tool is not in enabled_tools")
		}
		if srv.disabledTools[s.tool.Name] {
			return hide(srv.disabledToolsSrc, "tool is in disabled_tools")
		}
	}
	src := ""
	for i := 0; i < s.nApps; i++ {
		a := s.apps[i]
		if s.inheritsDefault(i) {
			continue
		}
		if tr := s.toolRules[i]; tr != nil && tr.enabled != nil {
			if !*tr.enabled {
				return hide(tr.enabledSrc, "tool is disabled")
			}
			src = tr.enabledSrc
			continue
		}
		if a.defaultToolsEnabled != nil {
			if !*a.defaultToolsEnabled {
				return hide(a.defaultToolsEnabledSrc, "app's tools are disabled by default")
			}
			src = a.defaultToolsEnabledSrc
			continue
		}
		if a.readOnly && !s.eff.IsReadOnly() {
			return hide(a.readSrc, "app is read-only and the tool is not read-only")
		}
		if !a.destructiveEnabled && s.eff.IsDestructive() {
			return hide(a.destructiveSrc, "destructive tools are disabled (destructiveHint true or unset, tool not read-only)")
		}
		if !a.openWorldEnabled && s.eff.IsOpenWorld() {
			return hide(a.openWorldSrc, "open-world tools are disabled (openWorldHint true or unset)")
		}
		src = "hint gating"
	}
	// Never show what Codex hides (its app gate reads the annotations only).
	if hidden, csrc := s.codexHides(); hidden {
		return hide(csrc, "Codex's app gate hides the tool: its app is disabled, or its annotations do not rule out a disabled destructive or open-world tool")
	}
	return true, Reason{}, Step{Step: StepVisibility, Outcome: "visible", Source: src}
}

// inheritsDefault reports whether apps[i] is the server's own app of a
// connector tool with no [apps.<server>] table: then its rules are
// _default's, which the connector's app already falls back to. Codex applies
// only the connector's app to such a tool, so with _default.enabled = false
// an explicitly enabled [apps.<connector>] shows its tools; an explicit
// [apps.<server>] table still applies on top (stricter than Codex).
func (s *state) inheritsDefault(i int) bool {
	return i == 1 && s.nApps == 2 && !s.apps[1].hasTable
}

// mode is step 4's mode: the user's layers' (userMode), restricted by any
// managed mode a requirements file sets for the tool.
func (s *state) mode() (config.Mode, string) {
	m, src := s.userMode()
	for i := 0; i < s.nApps; i++ {
		if rm, ok := s.apps[i].required[s.tool.Name]; ok {
			if r := config.RestrictMode(rm.mode, m); r != m {
				m, src = r, rm.src
			}
		}
	}
	return m, src
}

// userMode is the lookup: per-tool approval_mode (apps, then mcp_servers),
// app default_tools_approval_mode, server's, _default's, then auto.
func (s *state) userMode() (config.Mode, string) {
	for i := 0; i < s.nApps; i++ {
		if tr := s.toolRules[i]; tr != nil && tr.mode != config.ModeUnset {
			return tr.mode, tr.modeSrc
		}
	}
	if srv := s.server; srv != nil && srv.tools != nil {
		if tr := srv.tools[s.tool.Name]; tr != nil && tr.mode != config.ModeUnset {
			return tr.mode, tr.modeSrc
		}
	}
	for i := 0; i < s.nApps; i++ {
		if a := s.apps[i]; a.hasTable && a.mode != config.ModeUnset {
			return a.mode, a.modeSrc
		}
	}
	if srv := s.server; srv != nil && srv.mode != config.ModeUnset {
		return srv.mode, srv.modeSrc
	}
	if s.r.def.mode != config.ModeUnset {
		return s.r.def.mode, s.r.def.modeSrc
	}
	return config.ModeAuto, "default"
}

// baseline is step 4's decision for a mode and the effective hints.
func baseline(mode config.Mode, h *hints.Set) (v Verdict, rememberable bool, code, msg string) {
	switch mode {
	case config.ModeApprove:
		return Allow, false, CodeModeApprove, "approval mode is approve: allowed without asking"
	case config.ModePrompt:
		return Ask, false, CodeModePrompt, "approval mode is prompt: every call is asked"
	case config.ModeWrites:
		if h.IsReadOnly() {
			return Allow, false, CodeModeWritesReadOnly, "approval mode is writes and the tool is read-only"
		}
		return Ask, false, CodeModeWritesWrite, "approval mode is writes and the tool is not read-only"
	}
	if h[hints.Destructive] == hints.True {
		return Ask, true, CodeAutoDestructive, "auto: tool is destructive"
	}
	if h.IsReadOnly() {
		return Allow, false, CodeAutoReadOnly, "auto: tool is read-only"
	}
	if h[hints.Destructive].Or(true) || h.IsOpenWorld() {
		return Ask, true, CodeAutoOpenWorld, "auto: tool may be destructive or reach an open world (hints true or unset)"
	}
	return Allow, false, CodeAutoSafe, "auto: tool is neither destructive nor open-world"
}

// runPlugins is step 5. Combination: deny > ask > allow > abstain; an allow
// lifts a baseline ask only from a plugin with can_approve.
func (r *Rules) runPlugins(ctx context.Context, in *Input, d *Decision) {
	ci := checkInputs.Get().(*CheckInput)
	*ci = CheckInput{
		Session: in.Session, Labels: in.Labels, Server: d.Server, App: d.App, Connector: d.Connector,
		Tool: in.Tool, Arguments: in.Arguments, Hints: d.Hints, Caps: d.Capabilities,
		Baseline: d.Decision, Mode: d.Mode, Rememberable: d.Rememberable, Context: in.Context, State: in.State,
		ArgumentsChecked: true, // Decide ran CheckArguments before step 5
	}
	defer func() {
		*ci = CheckInput{} // keep nothing of this call alive
		checkInputs.Put(ci)
	}()
	baseAsk := d.Decision == Ask
	// An ask raised by plugins over a baseline allow is rememberable unless a
	// plugin says otherwise; over a baseline ask it keeps the baseline's answer.
	rememberable := d.Rememberable || !baseAsk
	d.baseForbids = baseAsk && !d.Rememberable
	// Verdicts are collected on the stack and copied into d.Reasons: a
	// decision with a few plugins allocates nothing here.
	var denyBuf, askBuf, approveBuf [4]Reason
	denies, asks, approvals := denyBuf[:0], askBuf[:0], approveBuf[:0]
	var denyArgs, askArgs, approveArgs []string // flagged by each kind of verdict
	// One clock reading per plugin, not two: each plugin's time runs from
	// the previous one's end. Only the monotonic clock is read (monoNow):
	// time.Now reads the wall clock as well, which Elapsed never needs.
	var start time.Duration
	if !in.NoTrace {
		start = monoNow()
	}
	for _, p := range in.Plugins {
		if !p.Matches(d.App, d.Tool) && (d.Connector == "" || !p.Matches(d.Server, d.Tool)) {
			continue
		}
		v := p.Check(ctx, ci)
		code, msg := pluginCode(&v), pluginMessage(&v)
		if !in.NoTrace {
			end := monoNow()
			st := Step{Step: StepPlugin, Outcome: v.Verdict.String(), Source: p.Name(), Elapsed: end - start,
				StateUpdate: v.StateUpdate, State: v.State, Detail: traceDetail(&v)}
			if v.State != nil {
				st.Detail += stateDetail(v.State) // pluginstate.go
			}
			d.Trace = append(d.Trace, st)
			start = end
		}
		d.Labels = append(d.Labels, v.Labels...)
		reason := Reason{Source: reasonSource(p), Code: code, Message: msg}
		switch v.Verdict {
		case Deny:
			denies = append(denies, reason)
			denyArgs = addFlagged(denyArgs, v.Arguments)
		case Ask:
			asks = append(asks, reason)
			askArgs = addFlagged(askArgs, v.Arguments)
			if !v.Remember {
				rememberable = false
				d.noteUnremembered(p.Name(), code, &v)
			}
		case Allow:
			if p.CanApprove() && baseAsk {
				approvals = append(approvals, reason)
				approveArgs = addFlagged(approveArgs, v.Arguments)
			}
		}
	}
	switch {
	case len(denies) > 0:
		d.Decision, d.Rememberable, d.Reasons, d.Flagged = Deny, false, append(d.Reasons[:0], denies...), denyArgs
	case len(asks) > 0:
		if !baseAsk {
			d.Reasons = d.Reasons[:0]
		}
		d.Decision, d.Rememberable, d.Flagged = Ask, rememberable, askArgs
		d.Reasons = append(d.Reasons, asks...)
	case len(approvals) > 0:
		d.Decision, d.Rememberable, d.Reasons, d.Flagged = Allow, false, append(d.Reasons[:0], approvals...), approveArgs
	}
}

// monoEpoch is a fixed reading of the clock; monoNow is the monotonic time
// since it. time.Since of a time that carries a monotonic reading reads
// the monotonic clock alone.
var monoEpoch = time.Now()

func monoNow() time.Duration { return time.Since(monoEpoch) }

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
