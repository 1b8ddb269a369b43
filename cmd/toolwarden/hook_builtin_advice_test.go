package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// builtinEvents are a call to each agent's own shell tool, in the agent's
// event format.
var builtinEvents = []struct {
	agent, tool, event string
}{
	{"claude", "Bash", `{"session_id":"b1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf build"},"cwd":"/tmp"}`},
	{"gemini", "run_shell_command", `{"session_id":"b1","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"rm -rf build"},"cwd":"/tmp"}`},
	{"codex", "shell", `{"session_id":"b1","hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{"command":["rm","-rf","build"]},"cwd":"/tmp"}`},
}

// hookReason is the reason in any agent's answer.
func hookReason(t *testing.T, out string) (decision, reason string) {
	t.Helper()
	var a struct {
		Decision, Reason string
		Hook             struct{ PermissionDecision, PermissionDecisionReason string } `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("hook answer %q: %v", out, err)
	}
	if a.Hook.PermissionDecision != "" {
		return a.Hook.PermissionDecision, a.Hook.PermissionDecisionReason
	}
	return a.Decision, a.Reason
}

// approveAt finds the table the advice names for approval_mode.
var approveAt = regexp.MustCompile(`approval_mode = "approve" in (\[[^\]]+\])`)

// The advice for an agent's own tool (asked, or denied by approval_policy)
// names the agent's app table, never a server to define or wrap; and
// following it word for word lets the next call through.
func TestHookAdviceForABuiltInToolNamesTheAgentsTable(t *testing.T) {
	t.Parallel()
	binaries(t)
	never := auditTestFile(t, "never.toml", "approval_policy = \"never\"\n")
	for _, tc := range builtinEvents {
		for _, cfg := range [][]string{nil, {"--config", never}} {
			t.Run(tc.agent+" "+strings.Join(cfg, " "), func(t *testing.T) {
				t.Parallel()
				_, env := freshHome(t)
				_, out, errb := runTW(t, env, tc.event, append([]string{"hook", "--agent", tc.agent, "--audit", "off"}, cfg...)...)
				decision, reason := hookReason(t, out)
				if decision == "allow" || decision == "" {
					t.Fatalf("the call was %q; want it asked or denied: %s %s", decision, out, errb)
				}
				for _, bad := range []string{"mcp_servers", "toolwarden wrap", "run the server"} {
					if strings.Contains(reason, bad) {
						t.Errorf("the advice names %q, which does not exist for %s's own %s:\n%s", bad, tc.agent, tc.tool, reason)
					}
				}
				m := approveAt.FindStringSubmatch(reason)
				if m == nil || m[1] != `[apps.`+tc.agent+`.tools."`+tc.tool+`"]` {
					t.Fatalf("the advice names %v; want [apps.%s.tools.%q]:\n%s", m, tc.agent, tc.tool, reason)
				}
				// Following the advice allows the call.
				body := m[1] + "\napproval_mode = \"approve\"\n"
				if len(cfg) > 0 {
					body = "approval_policy = \"never\"\n" + body
				}
				fixed := auditTestFile(t, "fixed.toml", body)
				_, out, _ = runTW(t, env, tc.event, "hook", "--agent", tc.agent, "--audit", "off", "--config", fixed)
				if tc.agent == "codex" {
					// Codex's hook allows by saying nothing.
					if strings.TrimSpace(out) != "" {
						t.Errorf("after following the advice: %s", out)
					}
					return
				}
				if decision, _ := hookReason(t, out); decision != "allow" {
					t.Errorf("after following the advice, the call is %q: %s", decision, out)
				}
			})
		}
	}
}

// An MCP tool's advice still names its server's table.
func TestHookAdviceForAnMCPToolStillNamesItsServer(t *testing.T) {
	t.Parallel()
	binaries(t)
	_, env := freshHome(t)
	_, out, _ := runTW(t, env, hookWriteEvent, "hook", "--agent", "claude", "--audit", "off")
	if _, reason := hookReason(t, out); !strings.Contains(reason, `[mcp_servers.fs.tools."write_file"]`) || strings.Contains(reason, "own tool") {
		t.Errorf("the MCP tool's advice: %s", reason)
	}
}
