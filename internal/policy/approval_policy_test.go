package policy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// fixedPlugin is a plugin with one verdict, to see what approval_policy
// does to what plugins say.
type fixedPlugin struct {
	verdict    policy.Verdict
	canApprove bool
}

func (p fixedPlugin) Name() string                  { return "fixed" }
func (p fixedPlugin) Matches(app, tool string) bool { return true }
func (p fixedPlugin) CanApprove() bool              { return p.canApprove }
func (p fixedPlugin) Check(context.Context, *policy.CheckInput) policy.PluginVerdict {
	return policy.PluginVerdict{Verdict: p.verdict, Code: "fixed_" + p.verdict.String(), Reason: "the plugin says " + p.verdict.String(), Remember: true}
}

// TestApprovalPolicyKeepsWhatOnlyToolwardenHas: under every Codex setting a
// plugin's deny stays a deny, and an ask that cannot be put to a human is a
// deny, never a silent allow; Codex's own asks follow Codex.
func TestApprovalPolicyKeepsWhatOnlyToolwardenHas(t *testing.T) {
	t.Parallel()
	const (
		never      = "approval_policy = \"never\"\n"
		fullAccess = "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n"
		granular   = "approval_policy = { granular = { sandbox_approval = true, rules = true, mcp_elicitations = false } }\n"
		onRequest  = ""
	)
	readOnly := `{"readOnlyHint":true}`
	for _, tc := range []struct {
		name        string
		config      string
		annotations string
		plugin      *fixedPlugin
		want        policy.Verdict
		code        string
	}{
		{"a plugin deny stays a deny under never with full access", fullAccess, readOnly, &fixedPlugin{verdict: policy.Deny}, policy.Deny, "fixed_deny"},
		{"a plugin deny stays a deny where Codex would run the call anyway", fullAccess, `{}`, &fixedPlugin{verdict: policy.Deny}, policy.Deny, "fixed_deny"},
		{"a plugin ask is a deny under never with full access", fullAccess, readOnly, &fixedPlugin{verdict: policy.Ask}, policy.Deny, "approval_policy_never"},
		{"a plugin ask over Codex's own ask is a deny under never with full access", fullAccess, `{}`, &fixedPlugin{verdict: policy.Ask}, policy.Deny, "approval_policy_never"},
		{"a plugin ask is a deny under never", never, readOnly, &fixedPlugin{verdict: policy.Ask}, policy.Deny, "approval_policy_never"},
		{"a plugin ask stays an ask under granular without mcp_elicitations", granular, readOnly, &fixedPlugin{verdict: policy.Ask}, policy.Ask, "fixed_ask"},
		{"a plugin ask stays an ask under on-request", onRequest, readOnly, &fixedPlugin{verdict: policy.Ask}, policy.Ask, "fixed_ask"},
		{"Codex's own ask runs under never with full access", fullAccess, `{}`, nil, policy.Allow, policy.CodeFullAccess},
		{"a can_approve plugin's allow still lifts an ask under never", never, `{}`, &fixedPlugin{verdict: policy.Allow, canApprove: true}, policy.Allow, "fixed_allow"},
		{"an abstaining plugin leaves Codex's full-access allow", fullAccess, `{}`, &fixedPlugin{verdict: policy.Abstain}, policy.Allow, policy.CodeFullAccess},
	} {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := config.LoadBytes("case.toml", []byte(tc.config+"[mcp_servers.srv]\ncommand = \"srv\"\n"))
			if err != nil {
				t.Fatal(err)
			}
			rules, err := policy.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			tool, err := hints.ParseTool([]byte(`{"name":"t","inputSchema":{"type":"object"},"annotations":` + tc.annotations + `}`))
			if err != nil {
				t.Fatal(err)
			}
			in := &policy.Input{Session: "s", Server: "srv", Tool: tool, Arguments: json.RawMessage(`{}`)}
			if tc.plugin != nil {
				in.Plugins = []policy.Checker{*tc.plugin}
			}
			d := rules.Decide(context.Background(), in)
			if d.Decision != tc.want || !hasCode(d, tc.code) {
				t.Fatalf("decision = %s %+v, want %s with code %s\ntrace: %+v", d.Decision, d.Reasons, tc.want, tc.code, d.Trace)
			}
			if d.Decision == policy.Ask && d.Prompt == nil {
				t.Fatal("an ask without a prompt")
			}
		})
	}
}

// TestFullAccessDenialSaysWhy: a deny under never with full access names
// what only toolwarden asks about, so the user knows what to change.
func TestFullAccessDenialSaysWhy(t *testing.T) {
	t.Parallel()
	cfg, err := config.LoadBytes("case.toml", []byte("approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n[apps.srv]\ntrust = \"none\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := policy.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := hints.ParseTool([]byte(`{"name":"t","annotations":{"readOnlyHint":true}}`))
	d := rules.Decide(context.Background(), &policy.Input{Server: "srv", Tool: tool, Arguments: json.RawMessage(`{}`)})
	if d.Decision != policy.Deny {
		t.Fatalf("decision = %s", d.Decision)
	}
	last := d.Reasons[len(d.Reasons)-1].Message
	if !strings.Contains(last, "toolwarden's own rules ask") || !strings.Contains(last, "never") {
		t.Errorf("reason %q does not say that toolwarden's own rule asked under never", last)
	}
}
