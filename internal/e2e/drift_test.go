package e2e

import (
	"strings"
	"testing"
)

// An upstream that changes a tool's annotations mid-session (and says so
// with tools/list_changed) loses the tool's remembered approval: the next
// call is asked again. Approving the new definition remembers it again.
func TestDriftDropsRememberedApproval(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		name := "multi round-trip"
		if legacy {
			name = "elicitation/create"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ask := answers("allow_session", "allow_session")
			c := startGo(t, legacy, ask, twBin, wrapArgs(t, "ts", nil, testServer)...)

			if out, isErr := c.call(t, "mutable", map[string]any{"x": "1"}); isErr || out != "mutable v0 ran" {
				t.Fatalf("first call: %q (error %v)", out, isErr)
			}
			if out, isErr := c.call(t, "mutable", map[string]any{"x": "2"}); isErr || ask.count() != 1 {
				t.Fatalf("second call: %q (error %v, asked %d times, want 1)", out, isErr, ask.count())
			}

			c.drainNotes()
			if out, isErr := c.call(t, "flip", nil); isErr || !strings.Contains(out, "version 1") {
				t.Fatalf("flip: %q (error %v)", out, isErr)
			}
			c.waitListChanged(t)
			c.waitTitle(t, "mutable", "Mutable v1")

			if out, isErr := c.call(t, "mutable", map[string]any{"x": "3"}); isErr || out != "mutable v1 ran" {
				t.Fatalf("after drift: %q (error %v)", out, isErr)
			}
			if ask.count() != 2 {
				t.Fatalf("asked %d times after the definition changed, want 2", ask.count())
			}
			mustContain(t, ask.last().Params.Message, "Mutable v1")
			mustContain(t, ask.last().Params.Message, "definition changed")

			if out, isErr := c.call(t, "mutable", map[string]any{"x": "4"}); isErr || ask.count() != 2 {
				t.Fatalf("after approving the new definition: %q (error %v, asked %d)", out, isErr, ask.count())
			}
		})
	}
}
