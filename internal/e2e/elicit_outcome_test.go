package e2e

import (
	"strings"
	"testing"
)

// Through wrap, with the official TypeScript SDK client: an approval
// prompt the client cancels (as Claude Code -p does) or declines (as
// codex exec does) denies the call, and the model reads what happened and
// how to allow the call, never that the user denied it; a person's Deny
// says the user denied it.
func TestWrapSaysHowAnApprovalPromptEnded(t *testing.T) {
	t.Parallel()
	refusals := []string{"user denied", "denied by the user", "user rejected", "rejected by the user", "user declined", "declined by the user"}
	write := func(what string) tsStep {
		return tsStep{Op: "call", Name: "write", Arguments: map[string]any{"what": what}}
	}
	res := runTS(t, true, []string{"cancel", "decline", "deny"},
		[]tsStep{write("cancelled"), write("declined"), write("denied"), {Op: "call", Name: "echo", Arguments: map[string]any{"message": "after"}}},
		twBin, wrapArgs(t, "ts", nil, testServer, "-state", t.TempDir())...)
	if len(res.Asked) != 3 {
		t.Fatalf("the client was asked %d times, want 3 (one per write)", len(res.Asked))
	}
	for i, tc := range []struct {
		name string
		want []string
		not  []string
	}{
		{"cancel", []string{`cancelled the approval prompt (MCP elicitation action "cancel")`, "no one saw", "toolwarden denied the call: it was not made", "To allow it", `approval_mode = "approve"`, `approval_channel = "inbox"`}, refusals},
		{"decline", []string{`declined the approval prompt (MCP elicitation action "decline")`, "no one saw", "toolwarden denied the call: it was not made", "To allow it", `approval_mode = "approve"`}, refusals},
		{"deny", []string{"the user denied this call to write"}, []string{"no one saw"}},
	} {
		r := res.Results[i]
		if r.Thrown != "" || !r.IsError || strings.Contains(r.Text, "wrote ") {
			t.Fatalf("%s: the call was not refused: %+v", tc.name, r)
		}
		for _, s := range tc.want {
			if !strings.Contains(r.Text, s) {
				t.Errorf("%s: the model's text does not say %q:\n%s", tc.name, s, r.Text)
			}
		}
		for _, s := range tc.not {
			if strings.Contains(strings.ToLower(r.Text), s) {
				t.Errorf("%s: the model's text says %q:\n%s", tc.name, s, r.Text)
			}
		}
	}
	if r := res.Results[3]; r.IsError || r.Text != "echo: after" {
		t.Fatalf("the next call: %+v", r)
	}
}
