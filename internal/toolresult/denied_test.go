package toolresult_test

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/toolresult"
)

// A call a policy plugin denies comes back to the model naming the rule
// that denied it and what would allow it, as the hooks say it: a model
// told only "denied" cannot tell its user where to look.
func TestADeniedCallNamesTheRuleAndHowToAllowIt(t *testing.T) {
	t.Parallel()
	d := &policy.Decision{Decision: policy.Deny, Server: "fs", App: "fs", Tool: "write_file",
		Reasons: []policy.Reason{{Source: policy.StepPlugin + ":argguard", Code: "arg_denied", Message: "secret/ is off limits"}}}
	res := toolresult.Denied("write_file", d)
	if !res.IsError || len(res.Content) != 1 {
		t.Fatalf("want one error text, got %+v", res)
	}
	text := res.Content[0].(mcp.TextContent).Text
	for _, want := range []string{"toolwarden denied this call to write_file", "secret/ is off limits", "[policies.argguard]", "to allow it"} {
		if !strings.Contains(text, want) {
			t.Errorf("want %q in:\n%s", want, text)
		}
	}
}

// Ended tells an answer from a prompt the client closed without one.
func TestOnlyDeclineAndCancelEndAPromptWithoutAnAnswer(t *testing.T) {
	t.Parallel()
	for action, want := range map[mcp.ElicitationResponseAction]bool{
		mcp.ElicitationResponseActionAccept: false, mcp.ElicitationResponseActionDecline: true, mcp.ElicitationResponseActionCancel: true, "other": false,
	} {
		if got := toolresult.Ended(&mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action}}); got != want {
			t.Errorf("Ended(%q) = %v, want %v", action, got, want)
		}
	}
	if toolresult.Ended(nil) {
		t.Error("Ended(nil) = true")
	}
}
