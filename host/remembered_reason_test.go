package host_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// The reason of a call let through by an earlier answer says which answer:
// one given for this session, or an "always" approval in the approvals
// file, which outlives the session and is revoked elsewhere.
func TestTheReasonSaysWhichAnswerAllowedTheCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scope host.Scope
		want  string
	}{
		{host.ForSession, "approved earlier in this session for this exact definition"},
		{host.Always, `approved earlier with "always" (the approvals file) for this exact definition`},
	} {
		h := testhost.New(t, "", host.Defaults().WithApprovalsFile(filepath.Join(t.TempDir(), "approvals.json")))
		ctx := context.Background()
		call := host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile)}
		d := h.Check(ctx, call)
		if err := h.Approve("s", &d, tc.scope); err != nil {
			t.Fatal(err)
		}
		d = h.Check(ctx, call)
		if d.Decision != host.Allow || len(d.Reasons) != 1 || d.Reasons[0].Message != tc.want {
			t.Errorf("scope %v: %s %+v, want allow because %q", tc.scope, d.Decision, d.Reasons, tc.want)
		}
	}
}
