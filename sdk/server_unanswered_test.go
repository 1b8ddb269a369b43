package sdk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/sdk"
)

// ender is a client that ends every approval prompt with action, choosing
// no option: claude -p cancels, codex exec declines.
type ender struct{ action mcp.ElicitationResponseAction }

func (e ender) Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: e.action}}, nil
}

// The sdk's own MCP server, like the proxy, tells the model what a client
// that declined or cancelled the approval prompt did, that no one may
// have seen it, and how to allow the call; never that the user denied it.
// Both protocol eras: elicitation/create, and the 2026-07-28 input request
// answered on a retry.
func TestAServerWhoseClientEndsThePromptSaysWhatTheClientDid(t *testing.T) {
	refusals := []string{"user denied", "denied by the user", "user rejected", "rejected by the user", "user declined", "declined by the user"}
	for _, v := range versions {
		for _, tc := range []struct {
			action mcp.ElicitationResponseAction
			want   string
		}{
			{mcp.ElicitationResponseActionDecline, `declined the approval prompt (MCP elicitation action "decline")`},
			{mcp.ElicitationResponseActionCancel, `cancelled the approval prompt (MCP elicitation action "cancel")`},
		} {
			t.Run("protocol "+v+" "+string(tc.action), func(t *testing.T) {
				t.Parallel()
				approvals := t.TempDir() + "/approvals.json"
				g := sdk.New(testhost.New(t, "", host.Defaults().WithApprovalsFile(approvals)))
				f := newFiles(g.ServerOption("fs"))
				out, isErr := call(t, connectAs(t, f, v, client.WithElicitationHandler(ender{tc.action})), "write_file", writeArgs)
				if !isErr || len(f.ran()) != 0 {
					t.Fatalf("the call was not refused: %v %q ran=%v", isErr, out, f.ran())
				}
				for _, s := range []string{tc.want, "no one saw", "toolwarden denied the call: it was not made", "To allow it", "run the agent interactively", `approval_mode = "approve"`, "toolwarden approvals add --approvals " + `"` + approvals + `"`} {
					if !strings.Contains(out, s) {
						t.Errorf("the model's text does not say %q:\n%s", s, out)
					}
				}
				// The server asks the client whatever approval_channel
				// says, so the inbox is no way to allow it here.
				for _, s := range append([]string{"approval_channel"}, refusals...) {
					if strings.Contains(strings.ToLower(out), s) {
						t.Errorf("the model's text says %q:\n%s", s, out)
					}
				}
			})
		}
	}
}
