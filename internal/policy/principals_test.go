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

// accessConfig restricts the deploy server's app to ops and alice, its
// rollback tool further to leads, and names approvers.
const accessConfig = `
[mcp_servers.deploy]
command = "deploy-mcp"
[apps.deploy]
principals = ["alice"]
groups = ["ops"]
approvers = ["group:leads", "carol"]
[apps.deploy.tools.rollback]
groups = ["leads"]
[apps.deploy.tools.status]
approval_mode = "approve"
[mcp_servers.open]
command = "open-mcp"
`

func compileAccess(t *testing.T, toml string, reqs ...string) *policy.Rules {
	t.Helper()
	cfg, err := config.LoadBytes("c.toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		req, err := config.ParseRequirements("admin"+string(rune('0'+i))+".toml", []byte(r))
		if err != nil {
			t.Fatal(err)
		}
		if cfg, err = cfg.ApplyRequirements(req); err != nil {
			t.Fatal(err)
		}
	}
	rules, err := policy.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

func accessTool(t *testing.T, name string) *hints.Tool {
	t.Helper()
	tl, err := hints.ParseTool([]byte(`{"name":"` + name + `","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func decideAs(rules *policy.Rules, server string, tool *hints.Tool, c *policy.Caller) policy.Decision {
	return rules.Decide(context.Background(), &policy.Input{Session: "s", Server: server, Tool: tool, Arguments: json.RawMessage(`{}`), Caller: c})
}

// Who sees and may call a restricted tool: every level that sets a rule
// must admit the caller (by name or by one group), names match exactly,
// and no caller at all (the local front ends) is admitted by none.
func TestPrincipalGateAdmitsOnlyWhomEveryLevelAdmits(t *testing.T) {
	t.Parallel()
	rules := compileAccess(t, accessConfig)
	for _, tc := range []struct {
		name   string
		tool   string
		caller *policy.Caller
		sees   bool
	}{
		{"a principal the app names sees its tools", "deploy_app", &policy.Caller{Name: "alice"}, true},
		{"a member of a group the app names sees them", "deploy_app", &policy.Caller{Name: "dave", Groups: []string{"dev", "ops"}}, true},
		{"anyone else does not", "deploy_app", &policy.Caller{Name: "mallory", Groups: []string{"dev"}}, false},
		{"no caller does not (fail closed)", "deploy_app", nil, false},
		{"a group name in another case is another group", "deploy_app", &policy.Caller{Name: "mallory", Groups: []string{"OPS"}}, false},
		{"a group name with a trailing space is another group", "deploy_app", &policy.Caller{Name: "mallory", Groups: []string{"ops "}}, false},
		{"a principal named like the group is not in it", "deploy_app", &policy.Caller{Name: "ops"}, false},
		{"a principal named group:ops is not in ops", "deploy_app", &policy.Caller{Name: "group:ops"}, false},
		{"a principal name in another case is another principal", "deploy_app", &policy.Caller{Name: "Alice"}, false},
		{"a group with the principal's name admits nothing by name", "deploy_app", &policy.Caller{Name: "mallory", Groups: []string{"alice"}}, false},
		{"an empty name matches no empty entry", "deploy_app", &policy.Caller{Name: "", Groups: []string{""}}, false},
		{"the tool narrows: ops alone does not reach rollback", "rollback", &policy.Caller{Name: "dave", Groups: []string{"ops"}}, false},
		{"the tool cannot widen: leads alone does not reach rollback", "rollback", &policy.Caller{Name: "erin", Groups: []string{"leads"}}, false},
		{"ops and leads together reach rollback", "rollback", &policy.Caller{Name: "erin", Groups: []string{"leads", "ops"}}, true},
		{"alice is not in leads, so rollback stays hidden from her", "rollback", &policy.Caller{Name: "alice"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := accessTool(t, tc.tool)
			ok, reason := rules.VisibleTo("deploy", tl, false, tc.caller)
			if ok != tc.sees {
				t.Fatalf("visible = %v (%+v), want %v", ok, reason, tc.sees)
			}
			d := decideAs(rules, "deploy", tl, tc.caller)
			if tc.sees {
				if d.Decision == policy.Deny || d.Hidden {
					t.Fatalf("decision %v hidden=%v: %+v", d.Decision, d.Hidden, d.Reasons)
				}
				return
			}
			if d.Decision != policy.Deny || !d.Hidden || len(d.Reasons) != 1 || d.Reasons[0].Code != policy.CodePrincipalNotAllowed {
				t.Fatalf("decision %v hidden=%v reasons %+v; want a hidden deny with %s", d.Decision, d.Hidden, d.Reasons, policy.CodePrincipalNotAllowed)
			}
			if reason.Code != policy.CodePrincipalNotAllowed {
				t.Errorf("Visible's reason %+v", reason)
			}
		})
	}
}

// A server with no rule is untouched: no trace line, no approvers, the
// decision of a config without the keys.
func TestToolsWithoutARuleDecideAsBefore(t *testing.T) {
	t.Parallel()
	with := compileAccess(t, accessConfig)
	without := compileAccess(t, "[mcp_servers.open]\ncommand = \"open-mcp\"\n")
	tl := accessTool(t, "anything")
	a, b := decideAs(with, "open", tl, nil), decideAs(without, "open", tl, nil)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("with rules elsewhere:\n%s\nwithout:\n%s", ja, jb)
	}
}

// The trace names the rule that decided, admitted or not, and the reason
// says whom it admits and who the caller was, in plain words.
func TestTheTraceNamesThePrincipalRuleThatDecided(t *testing.T) {
	t.Parallel()
	rules := compileAccess(t, accessConfig)
	d := decideAs(rules, "deploy", accessTool(t, "rollback"), &policy.Caller{Name: "dave", Groups: []string{"ops"}})
	st := findStep(d.Trace, policy.StepPrincipals)
	if st == nil || st.Outcome != "hidden" || st.Source != "apps.deploy.tools.rollback" {
		t.Fatalf("trace %+v", d.Trace)
	}
	want := "only groups leads may see and call this tool (apps.deploy.tools.rollback); caller dave (groups ops) is not one of them"
	if d.Reasons[0].Message != want {
		t.Errorf("reason %q\nwant   %q", d.Reasons[0].Message, want)
	}
	d = decideAs(rules, "deploy", accessTool(t, "rollback"), &policy.Caller{Name: "erin", Groups: []string{"leads", "ops"}})
	st = findStep(d.Trace, policy.StepPrincipals)
	if st == nil || st.Outcome != "allowed" || st.Source != "apps.deploy.tools.rollback" ||
		st.Detail != "caller erin (groups leads, ops) is admitted by apps.deploy and apps.deploy.tools.rollback" {
		t.Errorf("trace step %+v", st)
	}
	d = decideAs(rules, "deploy", accessTool(t, "deploy_app"), nil)
	if !strings.Contains(d.Reasons[0].Message, "no caller is known here: local front ends (wrap, proxy, hooks, sdk) have none") {
		t.Errorf("no-caller reason %q", d.Reasons[0].Message)
	}
}

func findStep(trace []policy.Step, name string) *policy.Step {
	for i := range trace {
		if trace[i].Step == name {
			return &trace[i]
		}
	}
	return nil
}

// remembered is an approvals store that holds every approval: what a
// caller allowed to call a tool might have left in the approvals file.
type remembered struct{}

func (remembered) Remembered(app, server, connector, tool, hash string) bool { return true }

// A remembered approval (an "always" another caller granted) never opens a
// tool to a caller the principal rule refuses: the gate runs first.
func TestARememberedApprovalDoesNotOpenARestrictedTool(t *testing.T) {
	t.Parallel()
	rules := compileAccess(t, accessConfig)
	tl := accessTool(t, "deploy_app")
	in := &policy.Input{Session: "s", Server: "deploy", Tool: tl, Arguments: json.RawMessage(`{}`), Approvals: remembered{}}
	in.Caller = &policy.Caller{Name: "alice"}
	if d := rules.Decide(context.Background(), in); d.Decision != policy.Allow || d.Reasons[0].Code != policy.CodeRemembered {
		t.Fatalf("alice with a remembered approval: %v %+v (the store must be in use)", d.Decision, d.Reasons)
	}
	in.Caller = &policy.Caller{Name: "mallory", Groups: []string{"dev"}}
	if d := rules.Decide(context.Background(), in); d.Decision != policy.Deny || d.Reasons[0].Code != policy.CodePrincipalNotAllowed {
		t.Errorf("mallory with the same remembered approval: %v %+v", d.Decision, d.Reasons)
	}
}

// Approvers: the decision carries them, MayApprove matches principals by
// name and groups by "group:" entries only, and every level that names
// approvers must admit the approver.
func TestMayApproveMatchesEveryLevelThatNamesApprovers(t *testing.T) {
	t.Parallel()
	rules := compileAccess(t, accessConfig+"[apps.deploy.tools.deploy_app]\napprovers = [\"group:leads\", \"frank\"]\n")
	alice := &policy.Caller{Name: "alice"}
	d := decideAs(rules, "deploy", accessTool(t, "deploy_app"), alice)
	if d.Decision != policy.Ask {
		t.Fatalf("decision %v: %+v", d.Decision, d.Reasons)
	}
	if strings.Join(d.Approvers, ",") != "group:leads,frank" {
		t.Errorf("approvers %v (want the tool's, the innermost)", d.Approvers)
	}
	for _, tc := range []struct {
		c    policy.Caller
		want bool
	}{
		{policy.Caller{Name: "erin", Groups: []string{"leads"}}, true}, // in both levels by group
		{policy.Caller{Name: "carol"}, false},                          // the app's, not the tool's
		{policy.Caller{Name: "frank"}, false},                          // the tool's, not the app's
		{policy.Caller{Name: "alice"}, false},                          // the caller is no approver
		{policy.Caller{Name: "group:leads"}, false},                    // a name is never a group
		{policy.Caller{Name: "erin", Groups: []string{"Leads"}}, false},
		{policy.Caller{Name: "erin", Groups: []string{"leads "}}, false},
		{policy.Caller{}, false},
	} {
		if got := d.MayApprove(tc.c); got != tc.want {
			t.Errorf("MayApprove(%+v) = %v, want %v", tc.c, got, tc.want)
		}
	}
	st := findStep(d.Trace, policy.StepApprovers)
	if st == nil || st.Outcome != "ask" || !strings.Contains(st.Detail, "needs approval by (one of group:leads, carol) and (one of group:leads, frank): caller alice (no groups) may not approve") {
		t.Errorf("approvers step %+v", st)
	}
	if ok, who := rules.ApproverCheck("deploy", "", "deploy_app", &policy.Caller{Name: "carol"}); ok || who == "" {
		t.Errorf("ApproverCheck(carol) = %v %q", ok, who)
	}
	if ok, _ := rules.ApproverCheck("deploy", "", "deploy_app", &policy.Caller{Name: "x", Groups: []string{"leads"}}); !ok {
		t.Error("ApproverCheck(leads) refused")
	}
}

// With no approvers configured, the caller's own answer counts.
func TestWithoutApproversTheCallersOwnAnswerCounts(t *testing.T) {
	t.Parallel()
	rules := compileAccess(t, "[apps.deploy]\ngroups = [\"ops\"]\n")
	d := decideAs(rules, "deploy", accessTool(t, "x"), &policy.Caller{Name: "dave", Groups: []string{"ops"}})
	if d.Decision != policy.Ask || d.Approvers != nil || !d.MayApprove(policy.Caller{Name: "dave"}) {
		t.Errorf("decision %v approvers %v", d.Decision, d.Approvers)
	}
}

// With no caller (a local front end), an ask that only approvers may
// answer cannot be put to anyone who counts: it is a deny that says who
// may approve. An allow stays an allow.
func TestAnAskOnlyApproversMayAnswerIsDeniedWithNoCaller(t *testing.T) {
	t.Parallel()
	rules := compileAccess(t, "[apps.deploy]\napprovers = [\"group:leads\"]\n[apps.deploy.tools.status]\napproval_mode = \"approve\"\n")
	d := decideAs(rules, "deploy", accessTool(t, "rollback"), nil)
	if d.Decision != policy.Deny || d.Reasons[len(d.Reasons)-1].Code != policy.CodeApproverRequired ||
		!strings.Contains(d.Reasons[len(d.Reasons)-1].Message, "count only when approved by group:leads (apps.deploy)") {
		t.Errorf("decision %v %+v", d.Decision, d.Reasons)
	}
	if d := decideAs(rules, "deploy", accessTool(t, "status"), nil); d.Decision != policy.Allow {
		t.Errorf("status: %v %+v", d.Decision, d.Reasons)
	}
	// With a caller the ask stays an ask: the front end refuses or routes it.
	if d := decideAs(rules, "deploy", accessTool(t, "rollback"), &policy.Caller{Name: "dave"}); d.Decision != policy.Ask || d.MayApprove(policy.Caller{Name: "dave"}) {
		t.Errorf("with a caller: %v", d.Decision)
	}
}

// An admin's requirement is a floor: a user's rule that admits everyone
// in "everyone" still leaves the tool hidden from callers outside the
// required group, and the reason says who required it.
func TestARequiredRuleHoldsAgainstAWiderUserRule(t *testing.T) {
	t.Parallel()
	rules := compileAccess(t, "[apps.deploy]\ngroups = [\"ops\", \"everyone\"]\n",
		"[apps.deploy]\ngroups = [\"ops\"]\n[apps.deploy.tools.rollback]\napprovers = [\"group:leads\"]\n")
	mallory := &policy.Caller{Name: "mallory", Groups: []string{"everyone"}}
	d := decideAs(rules, "deploy", accessTool(t, "deploy_app"), mallory)
	if d.Decision != policy.Deny || d.Reasons[0].Code != policy.CodePrincipalNotAllowed || !strings.HasPrefix(d.Reasons[0].RequiredBy, "admin0.toml:1:") {
		t.Errorf("mallory: %v %+v", d.Decision, d.Reasons)
	}
	dave := &policy.Caller{Name: "dave", Groups: []string{"ops"}}
	d = decideAs(rules, "deploy", accessTool(t, "rollback"), dave)
	if d.Decision != policy.Ask || d.MayApprove(*dave) || !d.MayApprove(policy.Caller{Name: "l", Groups: []string{"leads"}}) {
		t.Errorf("dave on rollback: %v approvers %v", d.Decision, d.Approvers)
	}
}

// A connector's tool passes both its connector app's rule and its
// server's.
func TestAConnectorToolPassesItsServersRuleToo(t *testing.T) {
	t.Parallel()
	rules := compileAccess(t, `
[mcp_servers.hub]
command = "hub"
connectors = true
[apps.hub]
groups = ["staff"]
[apps.calendar]
groups = ["ops"]
`)
	tl, err := hints.ParseTool([]byte(`{"name":"create_event","inputSchema":{"type":"object"},"_meta":{"connector_id":"calendar"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if app, _ := rules.Identity("hub", tl); app != "calendar" {
		t.Fatalf("app %q: the tool must be the connector's", app)
	}
	for _, tc := range []struct {
		groups []string
		sees   bool
	}{{[]string{"ops"}, false}, {[]string{"staff"}, false}, {[]string{"ops", "staff"}, true}} {
		if ok, _ := rules.VisibleTo("hub", tl, false, &policy.Caller{Name: "x", Groups: tc.groups}); ok != tc.sees {
			t.Errorf("groups %v: visible %v, want %v", tc.groups, ok, tc.sees)
		}
	}
}

// A decision's approvers are its own: writing into them changes neither
// the rules nor the next decision.
func TestWritingIntoADecisionsApproversChangesNoRule(t *testing.T) {
	t.Parallel()
	rules := compileAccess(t, "[apps.deploy]\napprovers = [\"group:leads\"]\n[apps.deploy.tools.x]\napprovers = [\"group:leads\", \"bob\"]\n")
	dave := &policy.Caller{Name: "dave"}
	d := decideAs(rules, "deploy", accessTool(t, "x"), dave)
	d.Approvers[0], d.Approvers[1] = "dave", "dave"
	if ok, _ := rules.ApproverCheck("deploy", "", "x", dave); ok {
		t.Error("the rules now admit dave")
	}
	if next := decideAs(rules, "deploy", accessTool(t, "x"), dave); next.MayApprove(*dave) || next.Approvers[0] != "group:leads" {
		t.Errorf("the next decision: %v", next.Approvers)
	}
}
