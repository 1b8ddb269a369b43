package sdk_test

import (
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/sdk"
)

// A call DenyAll refuses is refused in the proxy's and the hooks' words
// (internal/toolresult), not a second spelling: no one was asked, the call
// was not made, why it was asked, and every way to allow it, including the
// app-level place that the error's own advice leaves out.
func TestUnderDenyAllTheRefusalUsesTheProxysWordsForWhyAndHowToAllow(t *testing.T) {
	t.Parallel()
	f := newFiles()
	g := sdk.New(testhost.New(t, "", host.Defaults()), sdk.WithApprover(sdk.DenyAll))
	out, isErr := call(t, g.Client("fs", f.connect(t)), "write_file", map[string]any{"path": "/a.txt", "content": "x"})
	if !isErr || len(f.ran()) != 0 {
		t.Fatalf("the asked call ran (error %v): %s", isErr, out)
	}
	for _, want := range []string{
		"toolwarden: this call to write_file needs the user's approval, but no one was asked: this agent answers every approval question with sdk.DenyAll.",
		"toolwarden denied the call: it was not made.",
		"\nWhy: write_file does not say whether it changes anything or reaches outside this machine: asking",
		"\nTo allow it, the user can:\n  - run the agent with an approver that asks a person (sdk.WithApprover, e.g. sdk.OpenTerminal);",
		`(or, for a server the config does not define, in [apps.fs.tools."write_file"])`,
		`approval_channel = "inbox"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the model's text lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"user denied", "was not approved", "so it was denied"} {
		if strings.Contains(out, not) {
			t.Errorf("the model's text says %q:\n%s", not, out)
		}
	}
}
