package host_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// A deterministic plugin's verdict is reused only for the same input: the
// real trifecta module, asked about the same call before and after the
// session is tainted, must not answer the second time with the verdict it
// gave the clean session (the labels are part of its input). Each check is
// made twice, so the reuse path is the one answering.
func TestAReusedVerdictNeverOutlivesATaint(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, benchConfig+"[apps.fs.hints]\nreads_private_data = true\nsees_untrusted_content = true\ncan_exfiltrate = true\n"+
		"\n[policies.trifecta]\nbuiltin = \"trifecta\"\n", host.Defaults())
	ctx := context.Background()
	call := host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile), Arguments: json.RawMessage(`{"path":"/home/me/notes.txt","content":"x"}`)}
	var d host.Decision
	for range 2 {
		if d = h.Check(ctx, call); hasCode(&d, "lethal_trifecta") {
			t.Fatalf("a clean session: %+v", d.Reasons)
		}
	}
	h.Observe(ctx, call, &d, host.Result{})
	for i := range 2 {
		if d := h.Check(ctx, call); !hasCode(&d, "lethal_trifecta") {
			t.Fatalf("check %d after the taint reused the clean verdict: %+v", i, d.Reasons)
		}
	}
}
