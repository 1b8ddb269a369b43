package policy

import (
	"strings"
	"testing"
)

// A deny of an agent's own tool by approval_policy is lifted in the
// agent's app table; an MCP tool's in its server's.
func TestBuiltinDenyAdviceNamesTheAgentsAppNotAServer(t *testing.T) {
	d := &Decision{Decision: Deny, Server: "gemini", App: "gemini", Tool: "run_shell_command",
		Reasons: []Reason{{Source: StepApprovalPolicy, Code: "never", Message: "approval_policy is never"}}}
	got := BuiltinDenyAdvice(d, "Gemini CLI")
	if !strings.Contains(got, `[apps.gemini.tools."run_shell_command"]`) || strings.Contains(got, "mcp_servers") || !strings.Contains(got, "Gemini CLI's own tool") {
		t.Errorf("built-in advice: %s", got)
	}
	if mcp := DenyAdvice(d); !strings.Contains(mcp, `[mcp_servers.gemini.tools."run_shell_command"]`) {
		t.Errorf("MCP advice: %s", mcp)
	}
}
