package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// In hook mode the agent starts its servers itself: an admin's server
// allow-list is held against the command the agent's own config runs for
// the call's server (the command inside `toolwarden wrap` for a wrapped
// one), and a call to a server the list does not admit, or that cannot be
// found, is denied saying which requirement decided.
func TestHookHoldsCallsToTheServerAllowLists(t *testing.T) {
	t.Parallel()
	const requirements = "[mcp_servers.fs.identity]\ncommand = \"mcp-server-filesystem\"\n"
	cases := []struct {
		name, mcpJSON, want string // want: the permission decision
		because             string
		claudeJSON          string            // ~/.claude.json; PROJECT is the project folder
		env                 map[string]string // more of the hook's environment
	}{
		{"a server the list admits is decided as usual", `{"mcpServers":{"fs":{"command":"mcp-server-filesystem","args":["/srv"]}}}`, "allow", "", "", nil},
		{"the same name running another command is denied", `{"mcpServers":{"fs":{"command":"nc","args":["-l","4444"]}}}`, "deny", `does not match the required command "mcp-server-filesystem"`, "", nil},
		// SELF is this program (the test binary plays toolwarden here).
		{"a wrapped server is judged by the command it wraps", `{"mcpServers":{"fs":{"command":"SELF","args":["wrap","--app","fs","--","nc","-l","4444"]}}}`, "deny", `server "fs" (nc) does not match`, "", nil},
		{"a wrapped server the list admits is decided as usual", `{"mcpServers":{"fs":{"command":"SELF","args":["wrap","--app","fs","--","mcp-server-filesystem","/srv"]}}}`, "allow", "", "", nil},
		{"wrap is read by wrap's parser, which stops at the first argument that is not a flag", `{"mcpServers":{"fs":{"command":"SELF","args":["wrap","nc","-l","--","mcp-server-filesystem","/srv"]}}}`, "deny", `server "fs" (nc) does not match`, "", nil},
		{"wrap arguments wrap refuses are refused", `{"mcpServers":{"fs":{"command":"SELF","args":["wrap","--no-such-flag","--","mcp-server-filesystem","/srv"]}}}`, "deny", `runs toolwarden wrap with arguments wrap does not run a server with`, "", nil},
		{"another program named toolwarden is judged as itself", `{"mcpServers":{"fs":{"command":"/usr/bin/toolwarden","args":["wrap","--","mcp-server-filesystem","/srv"]}}}`, "deny", `server "fs" (/usr/bin/toolwarden) does not match`, "", nil},
		{"a server missing from the agent's config is denied", `{"mcpServers":{"other":{"command":"mcp-server-filesystem"}}}`, "deny", `it is not in claude's MCP config`, "", nil},
		{"an unapproved .mcp.json server an interactive Claude Code does not run is denied as disabled", `{"mcpServers":{"fs":{"command":"mcp-server-filesystem","args":["/srv"]}}}`, "deny", `has not been approved`,
			"", map[string]string{"CLAUDE_CODE_ENTRYPOINT": "cli"}},
		{"the approved .mcp.json server is the one judged", `{"mcpServers":{"fs":{"command":"mcp-server-filesystem","args":["/srv"]}}}`, "allow", "",
			`{"projects":{"PROJECT":{"enabledMcpjsonServers":["fs"]}},"mcpServers":{"fs":{"command":"nc"}}}`, map[string]string{"CLAUDE_CODE_ENTRYPOINT": "cli"}},
		{"the local-scope server wins over an approved .mcp.json server of the same name", `{"mcpServers":{"fs":{"command":"mcp-server-filesystem","args":["/srv"]}}}`, "deny", `server "fs" (nc) does not match`,
			`{"projects":{"PROJECT":{"enabledMcpjsonServers":["fs"],"mcpServers":{"fs":{"command":"nc","args":["-l","4444"]}}}}}`, map[string]string{"CLAUDE_CODE_ENTRYPOINT": "cli"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
			for _, d := range []string{home, project} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			reqs := filepath.Join(dir, "requirements.toml")
			if err := os.WriteFile(reqs, []byte(requirements), 0o600); err != nil {
				t.Fatal(err)
			}
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			mcpJSON := strings.ReplaceAll(tc.mcpJSON, "SELF", strings.Trim(quoteJSON(self), `"`))
			if err := os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(mcpJSON), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.claudeJSON != "" {
				if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(strings.ReplaceAll(tc.claudeJSON, "PROJECT", strings.Trim(quoteJSON(project), `"`))), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			vars := map[string]string{"HOME": home}
			for k, v := range tc.env {
				vars[k] = v
			}
			tools := writeTools(t, dir, `{"readOnlyHint":true,"openWorldHint":false}`)
			event := `{"session_id":"c1","hook_event_name":"PreToolUse","cwd":` + quoteJSON(project) + `,"tool_name":"mcp__fs__read_text_file","tool_input":{"path":"/tmp/x"}}`
			auditLog := filepath.Join(dir, "audit.jsonl")
			code, out, stderr := runCLIEnv(t, vars, event,
				"hook", "--agent", "claude", "--state-dir", dir, "--tools", tools, "--requirements", reqs, "--audit", auditLog)
			if code != 0 {
				t.Fatalf("exit %d: %s %s", code, out, stderr)
			}
			if got := permission(t, out); got != tc.want {
				t.Fatalf("decision %s, want %s: %s", got, tc.want, out)
			}
			var v struct {
				HookSpecificOutput struct{ PermissionDecisionReason string }
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			why := v.HookSpecificOutput.PermissionDecisionReason
			if tc.because != "" && (!strings.Contains(why, tc.because) || !strings.Contains(why, "required by "+reqs)) {
				t.Errorf("the reason does not say %q and where it is required: %s", tc.because, why)
			}
			// The audit log records what the agent was told.
			logged, err := os.ReadFile(auditLog)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(logged), `"decision":"`+tc.want+`"`) {
				t.Errorf("the audit log does not record %s:\n%s", tc.want, logged)
			}
		})
	}
}

func quoteJSON(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}
