package policy_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// denier is a plugin that denies every call it matches.
type denier struct{ code string }

func (denier) Name() string                  { return "guard" }
func (denier) Matches(app, tool string) bool { return true }
func (denier) CanApprove() bool              { return false }
func (x denier) Check(context.Context, *policy.CheckInput) policy.PluginVerdict {
	return policy.PluginVerdict{Verdict: policy.Deny, Code: x.code, Reason: "protected files are read-only"}
}

// Every kind of deny tells the model which rule denied the call and the
// change that would allow it; a deny no setting can lift says who can.
func TestDenyAdviceNamesTheRuleAndHowToAllowTheCall(t *testing.T) {
	t.Parallel()
	write := `{"name":"write_file","annotations":{"destructiveHint":true,"openWorldHint":false}}`
	for _, tc := range []struct {
		name, config string
		plugins      []policy.Checker
		args         string
		want         []string // each in the advice
	}{
		{"a plugin's deny names the plugin and its table", "", []policy.Checker{denier{"arg_denied"}}, `{}`,
			[]string{"[policies.guard]", "arg_denied", "to allow it"}},
		{"a tool hidden by a per-tool setting names the setting", "[apps.fs.tools.write_file]\nenabled = false\n", nil, `{}`,
			[]string{"hides this tool", "apps.fs.tools.write_file", "to allow it"}},
		{"a tool hidden by the hint gate names the gate", "[apps.fs]\ndestructive_enabled = false\n", nil, `{}`,
			[]string{"hides this tool", "destructive_enabled", "to allow it"}},
		{"approval_policy never says how to approve the tool", "approval_policy = \"never\"\n", nil, `{}`,
			[]string{"approval_policy", `approval_mode = "approve"`, `"on-request"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := config.LoadBytes("config.toml", []byte(tc.config))
			if err != nil {
				t.Fatal(err)
			}
			rules, err := policy.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			tool, err := hints.ParseTool([]byte(write))
			if err != nil {
				t.Fatal(err)
			}
			d := rules.Decide(context.Background(), &policy.Input{Server: "fs", Tool: tool, Arguments: []byte(tc.args), Plugins: tc.plugins})
			if d.Decision != policy.Deny {
				t.Fatalf("decision %s, want deny: %+v", d.Decision, d.Reasons)
			}
			advice := policy.DenyAdvice(&d)
			for _, w := range tc.want {
				if !strings.Contains(advice, w) {
					t.Errorf("advice %q lacks %q", advice, w)
				}
			}
		})
	}
}

// Advice is for denies only.
func TestDenyAdviceIsEmptyForAnAsk(t *testing.T) {
	t.Parallel()
	d := policy.Decision{Decision: policy.Ask, Reasons: []policy.Reason{{Source: policy.StepApprovalMode, Code: policy.CodeAutoDestructive}}}
	if got := policy.DenyAdvice(&d); got != "" {
		t.Fatalf("advice for an ask: %q", got)
	}
}

// A deny an admin's requirements file sets is not the user's to lift: the
// advice names the file and line and says who can.
func TestDenyAdviceSendsARequiredDenyToTheAdmin(t *testing.T) {
	t.Parallel()
	user, err := config.LoadBytes("user.toml", []byte("[apps.fs.tools.write_file]\nenabled = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := config.ParseRequirements("/etc/toolwarden/requirements.toml", []byte("[apps.fs.tools.write_file]\nenabled = false\n"))
	if err != nil {
		t.Fatal(err)
	}
	managed, err := user.ApplyRequirements(reqs)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := policy.Compile(managed)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := hints.ParseTool([]byte(`{"name":"write_file"}`))
	if err != nil {
		t.Fatal(err)
	}
	d := rules.Decide(context.Background(), &policy.Input{Server: "fs", Tool: tool, Arguments: []byte(`{}`)})
	advice := policy.DenyAdvice(&d)
	if !strings.Contains(advice, "required by /etc/toolwarden/requirements.toml:2:1") || !strings.Contains(advice, "only an admin") {
		t.Fatalf("advice %q", advice)
	}
}

// What a deny's reason says comes partly from outside: a plugin's reason
// quotes the argument it judged, which the model wrote. An argument that
// carries "required by" does not make the plugin's deny look like an
// admin's (the user would be told only an admin can lift what a rule of
// theirs can).
func TestDenyAdviceIsNotFooledByAnArgumentNamedLikeARequirement(t *testing.T) {
	t.Parallel()
	rules, err := policy.Compile(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	tool, err := hints.ParseTool([]byte(`{"name":"write_file","annotations":{"destructiveHint":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	d := rules.Decide(context.Background(), &policy.Input{Server: "fs", Tool: tool, Arguments: []byte(`{}`),
		Plugins: []policy.Checker{quoting{`path "/x required by /etc/toolwarden/requirements.toml:1:1" is protected`}}})
	if d.Decision != policy.Deny {
		t.Fatalf("decision %s, want the plugin's deny", d.Decision)
	}
	if advice := policy.DenyAdvice(&d); strings.Contains(advice, "only an admin") || !strings.Contains(advice, "[policies.guard]") {
		t.Fatalf("advice %q: an argument made a plugin's deny look like an admin's", advice)
	}
}

// quoting is a plugin that denies with a reason quoting an argument.
type quoting struct{ reason string }

func (quoting) Name() string                  { return "guard" }
func (quoting) Matches(app, tool string) bool { return true }
func (quoting) CanApprove() bool              { return false }
func (x quoting) Check(context.Context, *policy.CheckInput) policy.PluginVerdict {
	return policy.PluginVerdict{Verdict: policy.Deny, Code: "arg_denied", Reason: x.reason}
}
