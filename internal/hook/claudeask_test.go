package hook_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/hook"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// Claude Code -p shows no approval dialog: a hook's ask comes back to the
// model with the hook's reason. That reason must tell the model that no
// one may have seen the dialog and how the call can be allowed, while the
// answer stays an ask, so that an interactive user still gets the dialog.
func TestAClaudeAskSaysWhatHappensWhenNoOneSeesTheDialog(t *testing.T) {
	t.Parallel()
	ask := &policy.Decision{Decision: policy.Ask, Server: "fs", App: "fs", Tool: "write_file", Reasons: []policy.Reason{{Code: "approval_mode_prompt", Message: "approval mode is prompt: every call is asked"}}}
	var out struct {
		HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string }
	}
	if err := json.Unmarshal(hook.Render(hook.Claude, ask, json.RawMessage(`{"path":"a.txt"}`)).Stdout, &out); err != nil {
		t.Fatal(err)
	}
	if out.HookSpecificOutput.PermissionDecision != "ask" {
		t.Fatalf("permissionDecision %q, want ask: Claude Code's dialog is the channel", out.HookSpecificOutput.PermissionDecision)
	}
	reason := out.HookSpecificOutput.PermissionDecisionReason
	for _, want := range []string{"if no one saw it", "claude -p", "to allow it", `approval_mode = "approve"`, `[mcp_servers.fs.tools."write_file"]`} {
		if !strings.Contains(reason, want) {
			t.Errorf("want %q in the reason:\n%s", want, reason)
		}
	}
	if strings.Contains(strings.ToLower(reason), "user denied") {
		t.Errorf("the reason says the user denied the call:\n%s", reason)
	}
}
