package channel

import (
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// Every front end turns an answer into an approval through ScopeOf: each
// offered allow lasts as long as its name says, and a deny, an empty
// answer or anything that is not exactly an option allows nothing.
func TestScopeOfAllowsOnlyTheOptionsAndEachForItsOwnTime(t *testing.T) {
	t.Parallel()
	allows := map[string]host.Scope{
		policy.OptionAllowOnce:          host.Once,
		policy.OptionAllowSession:       host.ForSession,
		policy.OptionAllowSessionScoped: host.ForSessionScoped,
		policy.OptionAlways:             host.Always,
	}
	for option, want := range allows {
		if got, ok := ScopeOf(option); !ok || got != want {
			t.Errorf("ScopeOf(%q) = %v, %v; want %v, true", option, got, ok, want)
		}
	}
	for _, option := range []string{policy.OptionDeny, "", "ALLOW_ONCE", "allow_once ", "once", "session", "always\x00", "sudo"} {
		if _, ok := ScopeOf(option); ok {
			t.Errorf("ScopeOf(%q) allows", option)
		}
	}
}

// Label gives the words the form, the inbox and the webhook show for an
// option, so that a Go agent's own UI (sdk.Answer.Title) words it the
// same; what is not an option is shown as written.
func TestLabelIsWhatEveryChannelShowsForTheOption(t *testing.T) {
	t.Parallel()
	q := NewQuestion("write_file", askDecision(true), nil, true)
	if len(q.Options) != 4 {
		t.Fatalf("options %v", q.Options)
	}
	for _, o := range q.Options {
		if Label(o) != q.OptionTitle(o) || Label(o) == o {
			t.Errorf("Label(%q) = %q, the question shows %q", o, Label(o), q.OptionTitle(o))
		}
	}
	if Label("sudo") != "sudo" {
		t.Errorf("Label(sudo) = %q", Label("sudo"))
	}
}
