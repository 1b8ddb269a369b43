package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/internal/hints"
)

// Validate reports the traps in a config that loads fine but probably does
// not do what its author meant: warnings, never errors. Load already puts
// them in cfg.Warnings; call Validate for a Config built by hand.
func Validate(cfg *Config) []Diagnostic {
	v := &validator{cfg: cfg}
	v.approvalPolicy()
	v.appsDefaultTrap()
	v.defaultTypos()
	v.hintConflicts()
	v.serverNames()
	v.toolLists()
	v.appModesOnServers()
	v.channels()        // channel.go
	v.accessNarrowing() // principals.go
	return v.out
}

// appModesOnServers: Codex reads the approval modes of a custom server only
// from [mcp_servers.<name>]; toolwarden applies [apps.<name>] to the server
// too, but only ever stricter (never looser than Codex), so an "approve"
// there cannot lift an ask the server's own settings make. Say where to
// write it instead.
func (v *validator) appModesOnServers() {
	for _, id := range sortedIDs(v.cfg.Apps) {
		srv, ok := v.cfg.Servers[id]
		if !ok || srv.Connectors {
			continue
		}
		a := v.cfg.Apps[id]
		p := joinKey("apps", id)
		if a.DefaultToolsApprovalMode == ModeApprove {
			v.warn(joinKey(p, "default_tools_approval_mode"), a.Pos, "Codex reads approval modes of server %s only from [mcp_servers.%s], and toolwarden never lets this approve lift an ask made there; write default_tools_approval_mode = \"approve\" in [mcp_servers.%s] to approve its tools", quote(id), quoteKey(id), quoteKey(id))
		}
		for _, tn := range sortedIDs(a.Tools) {
			if a.Tools[tn].ApprovalMode == ModeApprove {
				tp := joinKey(joinKey(joinKey(p, "tools"), tn), "approval_mode")
				v.warn(tp, a.Tools[tn].Pos, "Codex reads approval modes of server %s only from [mcp_servers.%s], and toolwarden never lets this approve lift an ask made there; write it in [mcp_servers.%s.tools.%s]", quote(id), quoteKey(id), quoteKey(id), quoteKey(tn))
			}
		}
	}
}

type validator struct {
	cfg *Config
	out []Diagnostic
}

// warn records a warning at path, or at fallback when the config does not
// know where path was written (a Config built by hand).
func (v *validator) warn(path string, fallback Position, format string, args ...any) {
	pos, ok := v.cfg.keys[path]
	if !ok {
		pos = fallback
	}
	v.out = append(v.out, Diagnostic{
		Pos:      pos,
		Path:     path,
		Message:  fmt.Sprintf(format, args...),
		Severity: SeverityWarning,
	})
}

func (v *validator) approvalPolicy() {
	ap := v.cfg.ApprovalPolicy
	if ap.Value == "on-failure" {
		path := "approval_policy"
		if v.cfg.Profile != "" {
			if _, ok := v.cfg.keys[joinKey(joinKey("profiles", v.cfg.Profile), path)]; ok {
				path = joinKey(joinKey("profiles", v.cfg.Profile), path)
			}
		}
		v.warn(path, ap.Pos, `"on-failure" is deprecated in Codex and acts as "on-request" for MCP tool calls; write "on-request"`)
	}
}

// appsDefaultTrap: Codex's AppConfig.enabled defaults to true whenever the
// [apps.X] table exists, so with _default.enabled = false an [apps.X] that
// only sets, say, destructive_enabled = false switches X on. toolwarden
// reads it as Codex does; the author probably meant the opposite.
func (v *validator) appsDefaultTrap() {
	if Bool(v.cfg.Default.Enabled, true) {
		return
	}
	for _, id := range sortedIDs(v.cfg.Apps) {
		a := v.cfg.Apps[id]
		p := joinKey("apps", id)
		if _, written := v.cfg.keys[joinKey(p, "enabled")]; a.Enabled != nil || written {
			continue // set, or set wrongly (which is an error of its own)
		}
		v.warn(p, a.Pos, "app %s is enabled even though apps._default.enabled = false, because an [apps.%s] table without \"enabled\" means enabled = true (as in Codex); add enabled = false to keep it off, or enabled = true to say it is meant", quote(id), quoteKey(id))
	}
}

// defaultTypos: [apps.default] or [apps._defaults] is an app of that name,
// not the defaults, and silently changes nothing for every other app.
func (v *validator) defaultTypos() {
	for _, id := range sortedIDs(v.cfg.Apps) {
		if _, isServer := v.cfg.Servers[id]; isServer {
			continue
		}
		if id != "_default" && (normalizeKey(id) == "default" || editDistance(id, "_default") <= 2) {
			v.warn(joinKey("apps", id), v.cfg.Apps[id].Pos, "[apps.%s] configures an app named %s, not the defaults for every app; did you mean [apps._default]?", quoteKey(id), quote(id))
		}
	}
}

// hintConflicts: readOnlyHint = true with destructiveHint = true counts as
// destructive (the stricter reading), which is rarely what the override's
// author wanted.
func (v *validator) hintConflicts() {
	check := func(path string, pos Position, s *hints.Set) {
		if s.Get(hints.ReadOnly) == hints.True && s.Get(hints.Destructive) == hints.True {
			v.warn(path, pos, "readOnlyHint = true and destructiveHint = true together count as destructive, not read-only; drop the one you do not mean")
		}
	}
	for _, id := range sortedIDs(v.cfg.Apps) {
		a := v.cfg.Apps[id]
		p := joinKey("apps", id)
		check(joinKey(p, "hints"), a.Pos, &a.Hints)
		for _, name := range sortedIDs(a.Tools) {
			t := a.Tools[name]
			check(joinKey(joinKey(joinKey(p, "tools"), name), "hints"), t.Pos, &t.Hints)
		}
	}
}

// codexServerName is the pattern Codex checks server names against; it
// skips servers whose names do not match.
// isCodexServerName matches ^[a-zA-Z0-9_-]+$.
func isCodexServerName(s string) bool { return s != "" && onlyBytes(s, "_-") }

// onlyBytes says every byte of s is an ASCII letter, a digit or one of extra.
func onlyBytes(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

func (v *validator) serverNames() {
	for _, name := range sortedIDs(v.cfg.Servers) {
		if !isCodexServerName(name) {
			v.warn(joinKey("mcp_servers", name), v.cfg.Servers[name].Pos, "server name %s has characters other than letters, digits, '_' and '-': Codex refuses to start such a server; rename it", quote(name))
		}
	}
}

// toolLists: a tool in both enabled_tools and disabled_tools is hidden
// (disabled_tools is applied after enabled_tools), which contradicts the
// allow-list entry.
func (v *validator) toolLists() {
	for _, name := range sortedIDs(v.cfg.Servers) {
		s := v.cfg.Servers[name]
		var both []string
		for _, t := range s.DisabledTools {
			if slices.Contains(s.EnabledTools, t) && !slices.Contains(both, t) {
				both = append(both, t)
			}
		}
		if len(both) == 0 {
			continue
		}
		quoted := make([]string, len(both))
		for i, t := range both {
			quoted[i] = quote(t)
		}
		v.warn(joinKey(joinKey("mcp_servers", name), "disabled_tools"), s.Pos, "%s %s in both enabled_tools and disabled_tools; disabled_tools wins, so the tool is hidden: remove it from one list", strings.Join(quoted, ", "), plural(len(both), "is", "are"))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func sortedIDs[V any](m map[string]V) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
