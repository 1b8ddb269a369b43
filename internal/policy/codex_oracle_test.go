package policy_test

// This file is an independent model of Codex's own decision for one MCP
// tool call, written from Codex's source (latest seen) and used as the
// oracle of the "never looser than Codex" tests. It reads the decoded TOML
// directly, not toolwarden's config package, so the two cannot share a bug.
//
//   - app tools (codex_apps; here a connectors = true server and a tool with
//     _meta.connector_id): codex-rs/connectors/src/app_tool_policy.rs,
//     app_tool_policy_from_apps_config and app_is_enabled;
//   - custom servers: core/src/mcp_tool_call.rs custom_mcp_tool_approval_mode
//     and codex-mcp/src/tools.rs ToolFilter;
//   - the decision: core/src/mcp_tool_call.rs maybe_request_mcp_tool_approval,
//     codex-mcp/src/mcp/mod.rs mcp_permission_prompt_is_auto_approved,
//     requires_mcp_tool_approval(_for_mode), session_mcp_tool_approval_key,
//     and request_mcp_tool_user_approval (never -> denied).

// oracleTool is a tool definition as Codex sees it.
type oracleTool struct {
	name, title string
	connector   string
	// Annotations only: Codex ignores _meta hints. nil = absent.
	readOnly, destructive, openWorld *bool
}

// codexOutcome is Codex's decision.
type codexOutcome struct {
	hidden       bool
	verdict      string // "allow", "ask", "deny" (meaningless when hidden)
	rememberable bool
}

// codexDecide runs the model. specReadOnly applies toolwarden's one
// documented difference (MCP spec): a tool with readOnlyHint true and no
// destructiveHint is not destructive for hint gating.
func codexDecide(cfg map[string]any, server string, t oracleTool, remembered, specReadOnly bool) codexOutcome {
	servers := table(cfg, "mcp_servers")
	srv := table(servers, server)
	// Every tool of codex_apps (here: a connectors = true server) goes
	// through the app policy, with or without a connector id.
	appTool := boolOr(srv, "connectors", false)

	// The server's own filters (ToolFilter) and enabled flag.
	if !boolOr(srv, "enabled", true) {
		return codexOutcome{hidden: true}
	}
	if list, ok := srv["enabled_tools"]; ok && !contains(list, t.name) {
		return codexOutcome{hidden: true}
	}
	if contains(srv["disabled_tools"], t.name) {
		return codexOutcome{hidden: true}
	}

	var mode string
	if appTool {
		apps := table(cfg, "apps")
		def := table(apps, "_default")
		var app map[string]any
		hasApp := false
		if t.connector != "" {
			_, hasApp = apps[t.connector]
			app = table(apps, t.connector)
		}
		tools := table(app, "tools")
		tc, ok := tools[t.name].(map[string]any)
		if !ok && t.title != "" {
			tc, _ = tools[t.title].(map[string]any)
		}
		mode = firstString(tc["approval_mode"], app["default_tools_approval_mode"], def["default_tools_approval_mode"], "auto")
		enabled := boolOr(def, "enabled", true)
		if hasApp {
			enabled = boolOr(app, "enabled", true)
		}
		if !enabled {
			return codexOutcome{hidden: true}
		}
		switch {
		case tc["enabled"] != nil:
			if !tc["enabled"].(bool) {
				return codexOutcome{hidden: true}
			}
		case app["default_tools_enabled"] != nil:
			if !app["default_tools_enabled"].(bool) {
				return codexOutcome{hidden: true}
			}
		default:
			destructiveEnabled := boolOr(def, "destructive_enabled", true)
			if v, ok := app["destructive_enabled"].(bool); ok {
				destructiveEnabled = v
			}
			openWorldEnabled := boolOr(def, "open_world_enabled", true)
			if v, ok := app["open_world_enabled"].(bool); ok {
				openWorldEnabled = v
			}
			destructive := or(t.destructive, true)
			if specReadOnly && t.destructive == nil && or(t.readOnly, false) {
				destructive = false
			}
			openWorld := or(t.openWorld, true)
			if !((destructiveEnabled || !destructive) && (openWorldEnabled || !openWorld)) {
				return codexOutcome{hidden: true}
			}
		}
	} else {
		tools := table(srv, "tools")
		tc := table(tools, t.name)
		mode = firstString(tc["approval_mode"], srv["default_tools_approval_mode"], "auto")
	}

	policy, sandbox := approvalPolicy(cfg)
	never := policy == "never"
	// mcp_permission_prompt_is_auto_approved.
	if mode == "approve" || (never && sandbox == "danger-full-access") {
		return codexOutcome{verdict: "allow"}
	}
	if !requiresApproval(t, mode) {
		return codexOutcome{verdict: "allow"}
	}
	// Session memory exists only for auto mode, and for codex_apps only
	// with a connector id (session_mcp_tool_approval_key).
	rememberable := mode == "auto" && !(appTool && t.connector == "")
	if remembered && rememberable {
		return codexOutcome{verdict: "allow"}
	}
	if never {
		return codexOutcome{verdict: "deny"}
	}
	return codexOutcome{verdict: "ask", rememberable: rememberable}
}

// requiresApproval is requires_mcp_tool_approval_for_mode.
func requiresApproval(t oracleTool, mode string) bool {
	switch mode {
	case "prompt":
		return true
	case "writes":
		return !or(t.readOnly, false)
	case "approve":
		return false
	}
	if t.destructive != nil && *t.destructive {
		return true
	}
	if or(t.readOnly, false) {
		return false
	}
	return or(t.destructive, true) || or(t.openWorld, true)
}

// approvalPolicy reads approval_policy and sandbox_mode, the active
// profile's winning (Codex's ConfigProfile). The granular form is reported
// as "granular": it never denies tool-call approvals.
func approvalPolicy(cfg map[string]any) (policy, sandbox string) {
	read := func(t map[string]any) {
		switch v := t["approval_policy"].(type) {
		case string:
			policy = v
		case map[string]any:
			policy = "granular"
		}
		if v, ok := t["sandbox_mode"].(string); ok {
			sandbox = v
		}
	}
	read(cfg)
	if name, ok := cfg["profile"].(string); ok {
		read(table(table(cfg, "profiles"), name))
	}
	return policy, sandbox
}

func table(m map[string]any, k string) map[string]any {
	t, _ := m[k].(map[string]any)
	return t
}

func boolOr(m map[string]any, k string, def bool) bool {
	if v, ok := m[k].(bool); ok {
		return v
	}
	return def
}

func or(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

func firstString(vs ...any) string {
	for _, v := range vs {
		if s, ok := v.(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func contains(list any, s string) bool {
	switch l := list.(type) {
	case []string:
		for _, e := range l {
			if e == s {
				return true
			}
		}
	case []any:
		for _, e := range l {
			if e == s {
				return true
			}
		}
	}
	return false
}
