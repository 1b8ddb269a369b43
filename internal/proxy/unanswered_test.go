package proxy

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/toolresult"
)

// claimsARefusal lists what would tell the model a person refused.
var claimsARefusal = []string{"user denied", "denied by the user", "user rejected", "rejected by the user", "user declined", "declined by the user"}

// Each way an approval prompt can end without an allow reads as what it
// was: a client's cancel or decline says the client ended it (in a
// non-interactive run no one saw it) and how to allow the call; only a
// person's Deny says the user denied it; a client without elicitation
// says it cannot show prompts.
func TestEachEndOfAnApprovalPromptSaysWhatHappened(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := host.New(ctx, config.Default(), host.Defaults().WithApprovalsFile(t.TempDir()+"/approvals.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	p := &Proxy{h: h}
	rt := &route{name: "write_file"}
	d := &host.Decision{Server: "fs", App: "fs", Tool: "write_file", Rememberable: true, DefinitionHash: "abc"}
	text := func(r *mcp.CallToolResult) string { return toolresult.Text(r) }
	for _, tc := range []struct {
		name string
		got  string
		want []string
		not  []string
	}{
		{"the client cancelled", text(p.unanswered(rt, d, mcp.ElicitationResponseActionCancel)),
			[]string{"cancelled the approval prompt", `"cancel"`, "no one saw", "toolwarden denied the call: it was not made", "To allow it", "run the agent interactively", `approval_mode = "approve"`, "toolwarden approvals add", `approval_channel = "inbox"`},
			append([]string{"declined"}, claimsARefusal...)},
		{"the client declined", text(p.unanswered(rt, d, mcp.ElicitationResponseActionDecline)),
			[]string{"declined the approval prompt", `"decline"`, "no one saw", "toolwarden denied the call: it was not made", "To allow it", `approval_mode = "approve"`},
			append([]string{"cancelled"}, claimsARefusal...)},
		{"the user chose deny", text(p.choose(ctx, rt, host.Call{}, d, policy.OptionDeny).res),
			[]string{"the user denied this call to write_file"},
			[]string{"no one saw", "To allow it"}},
		{"the client cannot elicit", text(p.needsApproval(rt, d)),
			[]string{"cannot show approval prompts", "To allow it", "use an MCP client that supports elicitation", `approval_channel = "inbox"`},
			claimsARefusal},
	} {
		for _, s := range tc.want {
			if !strings.Contains(tc.got, s) {
				t.Errorf("%s: the text does not say %q:\n%s", tc.name, s, tc.got)
			}
		}
		for _, s := range tc.not {
			if strings.Contains(strings.ToLower(tc.got), s) {
				t.Errorf("%s: the text says %q:\n%s", tc.name, s, tc.got)
			}
		}
	}
}
