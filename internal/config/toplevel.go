package config

import (
	"slices"
	"strings"
)

// Every top-level key other than ours is Codex's and is ignored, so a typo
// of ours ([app.fs], [policy.argguard]) used to load as "no apps, no
// policies" without a word. topLevelTypos warns about a top-level key that
// is not Codex's and looks like one of ours; it stays a warning because the
// key may belong to a Codex newer than this list.

// ourTopLevel are the top-level keys toolwarden reads and a typo may have
// meant.
var ourTopLevel = []string{"apps", "mcp_servers", "policies", "approval_policy", "sandbox_mode", "profile", "profiles", "approval_channel", "webhook", "audit", "serve"}

// codexTopLevel are Codex's own top-level keys: never a typo, however close
// to ours they are spelled.
var codexTopLevel = []string{
	"approval_policy", "approvals_reviewer", "apps", "chatgpt_base_url", "check_for_update_on_startup",
	"cli_auth_credentials_store", "disable_response_storage", "experimental_resume", "features",
	"file_opener", "forced_chatgpt_workspace_id", "forced_login_method", "hide_agent_reasoning",
	"history", "instructions", "developer_instructions", "mcp_oauth_credentials_store", "mcp_servers",
	"model", "model_auto_compact_token_limit", "model_context_window", "model_provider",
	"model_providers", "model_reasoning_effort", "model_reasoning_summary", "model_verbosity",
	"notice", "notify", "otel", "personality", "plugins", "preferred_auth_method", "profile",
	"profiles", "project_doc_fallback_filenames", "project_doc_max_bytes", "projects",
	"review_model", "sandbox_mode", "sandbox_workspace_write", "shell_environment_policy",
	"show_raw_agent_reasoning", "tool_output_token_limit", "tool_suggest", "tools", "tui", "web_search",
	"windows_wsl_setup_acknowledged",
}

// topLevelAliases are words that mean one of our tables without being a
// near spelling of it: singulars too short for the edit budget, and other
// tools' names for MCP servers.
var topLevelAliases = map[string]string{
	"app":     "apps",
	"policy":  "policies",
	"server":  "mcp_servers",
	"servers": "mcp_servers",
	"mcp":     "mcp_servers",
}

// topLevelTypos returns a warning for each top-level key of root that
// toolwarden and Codex both ignore but that looks like one of ours, at
// where the key is first written.
func (l *loader) topLevelTypos(root map[string]any) []Diagnostic {
	var out []Diagnostic
	for _, k := range sortedKeys(root) {
		if slices.Contains(ourTopLevel, k) || slices.Contains(codexTopLevel, k) {
			continue
		}
		meant := topLevelSuggestion(k)
		if meant == "" {
			continue
		}
		what := "key"
		if _, ok := root[k].(map[string]any); ok {
			what = "table"
		}
		pos, _ := l.firstPos(joinKey("", k))
		out = append(out, Diagnostic{
			Pos:      pos,
			Path:     joinKey("", k),
			Message:  "top-level " + what + " " + quote(k) + " is read by neither toolwarden nor Codex, so it is ignored (did you mean " + meant + "?)",
			Severity: SeverityWarning,
		})
	}
	return out
}

// topLevelSuggestion is what key k probably meant, written as the user
// would write it ("[policies]", "[apps._default]", "approval_policy"), or "".
func topLevelSuggestion(k string) string {
	if s, ok := topLevelAliases[strings.ToLower(k)]; ok {
		return tableRef(s)
	}
	// A dot written as "_" or "-": apps_default for [apps._default],
	// mcp_servers_github for [mcp_servers.github].
	lower := strings.ToLower(k)
	for _, ours := range []string{"apps", "mcp_servers", "mcp-servers", "policies"} {
		for _, sep := range []string{"_", "-"} {
			if !strings.HasPrefix(lower, ours+sep) || len(k) == len(ours)+1 {
				continue
			}
			name := k[len(ours)+1:]
			if ours == "apps" && strings.ToLower(name) == "default" {
				name = "_default"
			}
			return "[" + joinKey(strings.ReplaceAll(ours, "-", "_"), name) + "]"
		}
	}
	if s := suggest(k, ourTopLevel); s != "" {
		return tableRef(s)
	}
	return ""
}

// tableRef writes one of our keys as it appears in a config: tables in
// brackets, scalars bare.
func tableRef(k string) string {
	switch k {
	case "apps", "mcp_servers", "policies", "profiles":
		return "[" + k + ".<name>]"
	}
	return k
}
