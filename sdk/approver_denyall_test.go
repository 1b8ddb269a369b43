package sdk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/sdk"
)

// Under DenyAll no one is asked: the model must read that, and how the
// call can be allowed, never that a person refused it. An approver that
// answers Deny is a person's deny, and says so.
func TestUnderDenyAllTheModelIsToldNoOneWasAsked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		approver sdk.Approver
		want     []string
		not      []string
	}{
		{"DenyAll", sdk.DenyAll,
			[]string{"no one was asked", "sdk.DenyAll", "To allow it", `approval_mode = "approve" in [mcp_servers.fs.tools."write_file"]`},
			[]string{"user denied", "denied by the user"}},
		{"Fixed(Deny) is DenyAll", sdk.Fixed(sdk.Deny),
			[]string{"no one was asked", "To allow it"},
			[]string{"user denied"}},
		{"a person's deny", sdk.ApproverFunc(func(_ context.Context, _ *sdk.Question) (sdk.Answer, error) { return sdk.Deny, nil }),
			[]string{"the user denied this call to write_file"},
			[]string{"no one was asked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFiles()
			g := sdk.New(testhost.New(t, "", host.Defaults()), sdk.WithApprover(tc.approver))
			out, isErr := call(t, g.Client("fs", f.connect(t)), "write_file", map[string]any{"path": "/a.txt", "content": "x"})
			if !isErr || len(f.ran()) != 0 {
				t.Fatalf("the asked call ran (error %v): %s", isErr, out)
			}
			for _, s := range tc.want {
				if !strings.Contains(out, s) {
					t.Errorf("the model's text does not say %q:\n%s", s, out)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(out, s) {
					t.Errorf("the model's text says %q:\n%s", s, out)
				}
			}
		})
	}
}
