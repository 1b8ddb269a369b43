package policy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// flagger is a plugin that answers the same verdict for every call.
type flagger struct {
	name string
	v    policy.PluginVerdict
}

func (f flagger) Name() string                { return f.name }
func (flagger) Matches(app, tool string) bool { return true }
func (flagger) CanApprove() bool              { return false }
func (f flagger) Check(context.Context, *policy.CheckInput) policy.PluginVerdict {
	return f.v
}

func askFlagging(name string, remember bool, args ...string) flagger {
	return flagger{name, policy.PluginVerdict{Verdict: policy.Ask, Code: "flag", Reason: "looked at " + strings.Join(args, ","), Remember: remember, Arguments: args}}
}

func decideWrite(t *testing.T, args string, plugins ...policy.Checker) policy.Decision {
	t.Helper()
	cfg, err := config.LoadBytes("t.toml", []byte("[apps.fs]\ndestructive_enabled = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := policy.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := hints.ParseTool([]byte(`{"name":"write_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	return rules.Decide(context.Background(), &policy.Input{Session: "s", Server: "fs", Tool: tool, Arguments: json.RawMessage(args), Plugins: plugins})
}

// A prompt that cannot show what it decides on offers allow_once and deny
// only, says why, and its decision is not rememberable (so that the host
// refuses a session or always scope for it).
func TestPromptGivesUpRememberingWhenItCannotShowWhatItDecidesOn(t *testing.T) {
	t.Parallel()
	contentFirst := `{"content":"` + strings.Repeat("x", 3000) + `","path":"/etc/cron.d/evil"}`
	var many strings.Builder
	many.WriteString(`{`)
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&many, `"k%d":%d,`, i, i)
	}
	many.WriteString(`"path":"/x"}`)
	cases := []struct {
		name         string
		args         string
		plugins      []policy.Checker
		rememberable bool
		flagged      string
		incomplete   string
	}{
		{"a cut value nobody flagged keeps remembering", contentFirst, nil, true, "", ""},
		{"a flagged path shown in full keeps remembering", contentFirst, []policy.Checker{askFlagging("p", true, "path")}, true, "/path", ""},
		{"a flagged value that is cut gives it up", contentFirst, []policy.Checker{askFlagging("p", true, "content")}, false, "/content", "/content"},
		{"hidden keys give it up", many.String(), nil, false, "", "not shown"},
		{"names and pointers to one argument count once", contentFirst, []policy.Checker{askFlagging("p", true, "path"), askFlagging("q", true, "/path", "/nested/x")}, true, "/path,/nested/x", ""},
		{"an abstaining plugin's flags do not count", contentFirst, []policy.Checker{flagger{"a", policy.PluginVerdict{Verdict: policy.Abstain, Arguments: []string{"content"}}}}, true, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := decideWrite(t, tc.args, tc.plugins...)
			if d.Decision != policy.Ask || d.Prompt == nil {
				t.Fatalf("decision %s, reasons %+v", d.Decision, d.Reasons)
			}
			if d.Rememberable != tc.rememberable {
				t.Errorf("rememberable = %v, want %v (incomplete %q)", d.Rememberable, tc.rememberable, d.Prompt.Incomplete)
			}
			wantOpts := "allow_once,deny"
			if tc.rememberable {
				wantOpts = "allow_once,allow_session,always,deny"
			}
			if got := strings.Join(d.Prompt.Options, ","); got != wantOpts {
				t.Errorf("options %s, want %s", got, wantOpts)
			}
			if got := strings.Join(d.Flagged, ","); got != tc.flagged {
				t.Errorf("flagged %q, want %q", got, tc.flagged)
			}
			if (tc.incomplete == "") != (d.Prompt.Incomplete == "") || !strings.Contains(d.Prompt.Incomplete, tc.incomplete) {
				t.Errorf("incomplete %q, want %q", d.Prompt.Incomplete, tc.incomplete)
			}
		})
	}
}

// The flags that count are those of the verdicts that decided: a deny's,
// not an outvoted ask's.
func TestFlaggedComeFromTheDecidingVerdicts(t *testing.T) {
	t.Parallel()
	deny := flagger{"d", policy.PluginVerdict{Verdict: policy.Deny, Code: "no", Arguments: []string{"path"}}}
	d := decideWrite(t, `{"path":"/etc/passwd","mode":"x"}`, askFlagging("a", true, "mode"), deny)
	if d.Decision != policy.Deny || strings.Join(d.Flagged, ",") != "/path" {
		t.Fatalf("decision %s flagged %v", d.Decision, d.Flagged)
	}
}
