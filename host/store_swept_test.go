package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
)

// A session row swept while a process still holds the session (a week
// unused in the store, an sdk program kept running) is written back
// whole at that process's next call, not only what changed since its last
// save: a taint learnt before the sweep still reaches every other process.
func TestASessionRowSweptUnderAProcessIsSavedBackWhole(t *testing.T) {
	onEachStore(t, func(t *testing.T, url string, exec func(string)) {
		toml := strings.Replace(trifectaConfig, "%s", "deny", 1)
		a, _ := replica(t, url, "a", toml, host.Defaults())
		ctx := context.Background()
		readNotes := tool(t, `{"name":"read_notes","annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
		fetch := tool(t, `{"name":"fetch","annotations":{"readOnlyHint":true,"openWorldHint":true}}`)
		send := tool(t, `{"name":"send_email","annotations":{"destructiveHint":false,"openWorldHint":true}}`)
		for _, c := range []host.Call{{Session: "s", Server: "notes", Tool: readNotes}, {Session: "s", Server: "web", Tool: fetch}} {
			d := a.Check(ctx, c)
			a.ObserveAfter(ctx, c, &d, host.Result{Text: "ok"})
		}
		exec(`DELETE FROM tw_sessions WHERE id = 's'`) // what the retention sweep does
		// A's next call changes nothing in the session...
		if d := a.Check(ctx, host.Call{Session: "s", Server: "notes", Tool: readNotes}); d.Decision != host.Allow {
			t.Fatalf("a plain read through A: %s %+v", d.Decision, d.Reasons)
		}
		// ... yet a process that never held the session finds the taint.
		b, _ := replica(t, url, "b", toml, host.Defaults())
		if d := b.Check(ctx, host.Call{Session: "s", Server: "mail", Tool: send}); d.Decision != host.Deny || !hasReason(d, "lethal_trifecta") {
			t.Fatalf("exfiltrating send through B after the sweep: %s %+v", d.Decision, d.Reasons)
		}
	})
}
