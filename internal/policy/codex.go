package policy

import (
	"fmt"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
)

// This file is the Codex floor: what Codex itself decides from the same
// config and tool definition (codex-rs: core/src/mcp_tool_call.rs for the
// mode of custom servers, connectors/src/app_tool_policy.rs for app tools,
// codex-mcp/src/mcp/mod.rs for the approval_policy shortcut). toolwarden's
// own rules ([apps.*] on every server, trust, drift, plugins) may only be
// stricter: the pipeline takes the stricter of its own verdict and this one,
// so no Codex config allows under toolwarden what Codex would ask about or
// hide. The one exception is the MCP spec's read-only rule (see codexGated).

// Reason codes added by the floor and by approval_policy.
const (
	// CodeFullAccess: approval_policy = "never" with sandbox_mode =
	// "danger-full-access"; Codex runs the call without asking.
	CodeFullAccess = "approval_policy_never_full_access"
)

// codexHints are the hints Codex reads: the annotations object only (no
// _meta hints), believed as declared, with the config's own hints overrides
// applied as prepare applies them (they are the user's word, and a config
// that has them is not one Codex can load).
func (s *state) codexHints() *hints.Set {
	if s.cxDone {
		return &s.cx
	}
	s.cx = s.tool.Annotated
	for i := s.nApps - 1; i >= 0; i-- {
		if h := s.apps[i].hints; h != nil {
			overlay(&s.cx, h)
		}
	}
	for i := s.nApps - 1; i >= 0; i-- {
		if tr := s.toolRules[i]; tr != nil && tr.hints != nil {
			overlay(&s.cx, tr.hints)
		}
	}
	s.cxDone = true
	return &s.cx
}

func overlay(dst, src *hints.Set) {
	for h, v := range src {
		if v != hints.Unset {
			dst[h] = v
		}
	}
}

// codexGated reports whether Codex's hint gating hides the tool from app a:
// (destructive_enabled || !destructive) && (open_world_enabled || !open_world),
// a missing hint counting as true. One difference, forced by the MCP spec:
// destructiveHint applies only when readOnlyHint is false, so a tool that
// says readOnlyHint = true and nothing about destructiveHint is not
// destructive here (Codex hides it).
func (s *state) codexGated(a *appRules) bool {
	h := s.codexHints()
	destructive := h[hints.Destructive] == hints.True ||
		(h[hints.ReadOnly] != hints.True && h[hints.Destructive].Or(true))
	openWorld := h[hints.OpenWorld].Or(true)
	return (!a.destructiveEnabled && destructive) || (!a.openWorldEnabled && openWorld)
}

// aggregated reports whether the call is to a connectors = true server,
// Codex's codex_apps: all its tools go through Codex's app policy, those
// without a connector id under no app (so _default's rules alone).
func (s *state) aggregated() bool { return s.server != nil && s.server.connectors }

// codexHides is Codex's app gate for a tool of a connectors = true server,
// where it can be stricter than toolwarden's own: the hint gating on the
// hints Codex reads (codexGated), and, for the server's own tools (no
// connector id), _default's enabled flag and gating, whatever an
// [apps.<server>] table says. toolwarden's own gate runs first and covers
// the rest (app and per-tool enabled flags) identically.
func (s *state) codexHides() (bool, string) {
	if !s.aggregated() {
		return false, ""
	}
	a := s.apps[0]
	if s.nApps == 1 {
		a = &s.r.def
		if !a.enabled {
			return true, a.enabledSrc
		}
	} else if tr := s.toolRules[0]; (tr != nil && tr.enabled != nil) || a.defaultToolsEnabled != nil {
		return false, ""
	}
	if s.codexGated(a) {
		return true, a.destructiveSrc + ", " + a.openWorldSrc
	}
	return false, ""
}

// codexMode is the approval mode Codex resolves for the call. A tool of a
// connectors = true server (Codex's codex_apps) takes its app's: per-tool
// approval_mode (by name, then title), the app's
// default_tools_approval_mode, _default's, auto. Any
// other tool is a custom server's, and Codex reads those only from
// [mcp_servers.<name>]: the tool's approval_mode, the server's
// default_tools_approval_mode, auto. [apps.*] never applies to it in Codex.
func (s *state) codexMode() (config.Mode, string) {
	if s.aggregated() {
		if s.nApps == 2 {
			if tr := s.toolRules[0]; tr != nil && tr.mode != config.ModeUnset {
				return tr.mode, tr.modeSrc
			}
			if a := s.apps[0]; a.hasTable && a.mode != config.ModeUnset {
				return a.mode, a.modeSrc
			}
		}
		if s.r.def.mode != config.ModeUnset {
			return s.r.def.mode, s.r.def.modeSrc
		}
		return config.ModeAuto, "default"
	}
	if srv := s.server; srv != nil {
		if tr := srv.tools[s.tool.Name]; tr != nil && tr.mode != config.ModeUnset {
			return tr.mode, tr.modeSrc
		}
		if srv.mode != config.ModeUnset {
			return srv.mode, srv.modeSrc
		}
	}
	return config.ModeAuto, "default"
}

// codexFloors reports whether Codex has a verdict of its own from this
// config: for a server the config defines in [mcp_servers], or a tool of a
// connectors = true one. A server the config does not define (toolwarden
// wrap --app NAME, or a library caller's name) is not one Codex would run
// from this file, so only toolwarden's rules decide it.
func (s *state) codexFloors() bool { return s.server != nil }

// codexBaseline is Codex's requires_mcp_tool_approval_for_mode over its
// hints. Only auto asks may be remembered (session_mcp_tool_approval_key).
// Unlike toolwarden's writes, Codex's allows a tool marked both read-only
// and destructive: only readOnlyHint counts there.
func codexBaseline(mode config.Mode, h *hints.Set) (v Verdict, rememberable bool, code, msg string) {
	switch mode {
	case config.ModeApprove:
		return Allow, false, CodeModeApprove, "approval mode is approve: allowed without asking"
	case config.ModePrompt:
		return Ask, false, CodeModePrompt, "approval mode is prompt: every call is asked"
	case config.ModeWrites:
		if h[hints.ReadOnly] == hints.True {
			return Allow, false, CodeModeWritesReadOnly, "approval mode is writes and the tool is read-only"
		}
		return Ask, false, CodeModeWritesWrite, "approval mode is writes and the tool is not read-only"
	}
	if h[hints.Destructive] == hints.True {
		return Ask, true, CodeAutoDestructive, "auto: tool is destructive"
	}
	if h[hints.ReadOnly] == hints.True {
		return Allow, false, CodeAutoReadOnly, "auto: tool is read-only"
	}
	if h[hints.Destructive].Or(true) || h[hints.OpenWorld].Or(true) {
		return Ask, true, CodeAutoOpenWorld, "auto: tool may be destructive or reach an open world (hints true or unset)"
	}
	return Allow, false, CodeAutoSafe, "auto: tool is neither destructive nor open-world"
}

// floorBaseline is step 4: toolwarden's verdict from its own mode and the
// effective hints, then Codex's from Codex's mode and hints; the stricter
// wins, and an ask may be remembered only if every side that asks allows it.
// deciding is the mode of the side that decided. It records in s whether
// Codex asks, for approval_policy (step 7).
//
// say is the reason in plain words (reason_words.go); msg, with the modes
// and hints that decided, is the trace's detail.
func (s *state) floorBaseline(mode config.Mode, modeSrc string) (v Verdict, rememberable bool, code, say, msg, src string, deciding config.Mode) {
	v, rememberable, code, msg = baseline(mode, &s.eff)
	say = baselineWords(s.tool.Name, code, &s.eff)
	src, deciding = modeSrc, mode
	cmode, csrc := s.codexMode()
	cv, crem, ccode, cmsg := codexBaseline(cmode, s.codexHints())
	if s.aggregated() && s.nApps == 1 {
		// Codex keys remembered approvals of codex_apps by connector id;
		// a tool without one cannot be remembered.
		crem = false
	}
	s.codexAsks = cv == Ask
	switch {
	case !s.codexFloors():
		// No Codex verdict to floor by; codexAsks still says whether
		// Codex's default (auto, annotations) would ask, for step 7.
	case cv != Ask:
	case v != Ask:
		// Codex asks where toolwarden's own rules would allow: Codex's ask.
		return Ask, crem, ccode, baselineWords(s.tool.Name, ccode, s.codexHints()) + " (by Codex's settings for this tool)",
			cmsg + " (Codex's mode for this tool, from " + csrc + ")", csrc, cmode
	case rememberable && !crem:
		rememberable = false
		msg += "; not rememberable: Codex's mode for this tool is " + string(cmode) + " (" + csrc + ")"
	}
	return v, rememberable, code, say, msg, src, deciding
}

// askedByPlugin reports whether an ask came from a plugin (its reasons are
// kept with a "plugin:<name>" source).
func askedByPlugin(d *Decision) bool {
	for _, r := range d.Reasons {
		if len(r.Source) > len(StepPlugin) && r.Source[:len(StepPlugin)+1] == StepPlugin+":" {
			return true
		}
	}
	return false
}

// ApproveAdvice says where to write approval_mode = "approve" so that the
// tool of d runs without asking: where Codex reads it, since an approve
// anywhere else cannot lift Codex's own ask for a server the config
// defines.
func ApproveAdvice(d *Decision) string {
	if d.Connector != "" {
		return fmt.Sprintf("set approval_mode = \"approve\" in [apps.%s.tools.%q] of the toolwarden config", d.Connector, d.Tool)
	}
	return fmt.Sprintf("set approval_mode = \"approve\" in [mcp_servers.%s.tools.%q] of the toolwarden config (or, for a server the config does not define, in [apps.%s.tools.%q])", d.Server, d.Tool, d.App, d.Tool)
}
