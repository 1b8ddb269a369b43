package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// callerConfig: the deploy server's tools are for ops (and alice), its
// rollback tool for leads among them, and asks of rollback count only
// when a lead approves. The fs server has no rule.
const callerConfig = `
[mcp_servers.deploy]
command = "deploy-mcp"
[apps.deploy]
principals = ["alice"]
groups = ["ops"]
[apps.deploy.tools.rollback]
groups = ["leads"]
approvers = ["group:leads"]
[mcp_servers.fs]
command = "fs-mcp"
`

const (
	deployApp = `{"name":"deploy_app","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`
	rollback  = `{"name":"rollback","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`
)

var (
	alice   = host.Caller{Name: "alice"}
	mallory = host.Caller{Name: "mallory", Groups: []string{"dev"}}
	lead    = host.Caller{Name: "lena", Groups: []string{"ops", "leads"}}
	opsDave = host.Caller{Name: "dave", Groups: []string{"ops"}}
)

func bind(t *testing.T, h *host.Host, session string, c host.Caller) {
	t.Helper()
	if err := h.SetCaller(session, c); err != nil {
		t.Fatal(err)
	}
}

func callOf(session, server string, tl *host.Tool) host.Call {
	return host.Call{Session: session, Server: server, Tool: tl, Arguments: json.RawMessage(`{}`)}
}

// A caller outside the groups does not see the tool in its list, and a
// call to it anyway (a client that guessed the name) is denied without a
// prompt, as hidden; a caller inside sees it and gets the ordinary ask.
func TestACallerOutsideTheGroupsIsDeniedAToolItCannotSee(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, callerConfig, host.Defaults())
	ctx := context.Background()
	tools := []*host.Tool{tool(t, deployApp), tool(t, rollback)}
	bind(t, h, "m", mallory)
	bind(t, h, "a", alice)
	if got := h.Filter(ctx, "m", "deploy", tools); len(got) != 0 {
		t.Errorf("mallory's list: %v", names(got))
	}
	if got := h.Filter(ctx, "a", "deploy", tools); len(got) != 1 || got[0].Name != "deploy_app" {
		t.Errorf("alice's list: %v (rollback is for leads)", names(got))
	}
	if ok, r := h.Visible("m", "deploy", tools[0]); ok || r.Code != policy.CodePrincipalNotAllowed {
		t.Errorf("Visible for mallory: %v %+v", ok, r)
	}
	d := h.Check(ctx, callOf("m", "deploy", tools[0]))
	if d.Decision != host.Deny || !d.Hidden || d.Prompt != nil || d.Reasons[0].Code != policy.CodePrincipalNotAllowed {
		t.Errorf("mallory's call: %v hidden=%v %+v", d.Decision, d.Hidden, d.Reasons)
	}
	if d := h.Check(ctx, callOf("a", "deploy", tools[0])); d.Decision != host.Ask {
		t.Errorf("alice's call: %v %+v", d.Decision, d.Reasons)
	}
	// A tool without a rule is everyone's, with a caller or without.
	fs := tool(t, writeFile)
	if d := h.Check(ctx, callOf("m", "fs", fs)); d.Decision != host.Ask {
		t.Errorf("mallory on fs: %v %+v", d.Decision, d.Reasons)
	}
}

// Filter with a list plugin takes the same gate: the plugin is never shown
// a tool the caller may not see, and the caller never gets it.
func TestFilterWithAListPluginHidesRestrictedToolsToo(t *testing.T) {
	t.Parallel()
	var seen []string
	h := testhost.New(t, callerConfig, host.Defaults().WithPlugin(recordingLister{seen: &seen}))
	ctx := context.Background()
	bind(t, h, "m", mallory)
	tools := []*host.Tool{tool(t, deployApp), tool(t, rollback)}
	if got := h.Filter(ctx, "m", "deploy", tools); len(got) != 0 {
		t.Errorf("mallory's list: %v", names(got))
	}
	if len(seen) != 0 {
		t.Errorf("the list plugin saw %v", seen)
	}
	if d := h.Check(ctx, callOf("m", "deploy", tools[0])); d.Decision != host.Deny || d.Reasons[0].Code != policy.CodePrincipalNotAllowed {
		t.Errorf("mallory's call with a list plugin: %v %+v", d.Decision, d.Reasons)
	}
}

type recordingLister struct{ seen *[]string }

func (recordingLister) Name() string { return "recorder" }
func (l recordingLister) List(_ context.Context, in *host.ListInput) ([]string, error) {
	for _, t := range in.Tools {
		*l.seen = append(*l.seen, t.Name)
	}
	return nil, nil
}

// With no caller bound (wrap, proxy, hooks, sdk), a restricted tool is
// hidden and denied: the local user is in no group.
func TestWithNoCallerARestrictedToolIsHiddenAndDenied(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, callerConfig, host.Defaults())
	tl := tool(t, deployApp)
	if got := h.Filter(context.Background(), "local", "deploy", []*host.Tool{tl}); len(got) != 0 {
		t.Errorf("listed: %v", names(got))
	}
	d := h.Check(context.Background(), callOf("local", "deploy", tl))
	if d.Decision != host.Deny || !d.Hidden || !strings.Contains(d.Reasons[0].Message, "no caller is known here") {
		t.Errorf("%v %+v", d.Decision, d.Reasons)
	}
}

// Names are exact: a group in another case, with a trailing space, or a
// principal whose name is written like the group, is not in the group.
func TestNamesThatOnlyLookLikeTheGroupAreNotInIt(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, callerConfig, host.Defaults())
	tl := tool(t, deployApp)
	for i, c := range []host.Caller{
		{Name: "m1", Groups: []string{"Ops"}},
		{Name: "m2", Groups: []string{"ops "}},
		{Name: "m3", Groups: []string{" ops"}},
		{Name: "ops"},
		{Name: "group:ops"},
		{Name: "ALICE"},
		{Name: "alice "},
	} {
		s := "s" + string(rune('0'+i))
		bind(t, h, s, c)
		if d := h.Check(context.Background(), callOf(s, "deploy", tl)); d.Decision != host.Deny || d.Reasons[0].Code != policy.CodePrincipalNotAllowed {
			t.Errorf("%+v: %v %+v", c, d.Decision, d.Reasons)
		}
	}
}

// A session belongs to one caller: binding it to another (or to the same
// name with other groups, a way to gain a group) fails, and the session
// keeps deciding as its first caller. The binding is the host's own copy.
func TestASessionCannotChangeHands(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, callerConfig, host.Defaults())
	ctx := context.Background()
	groups := []string{"ops"}
	bind(t, h, "s", host.Caller{Name: "dave", Groups: groups})
	if err := h.SetCaller("s", host.Caller{Name: "dave", Groups: []string{"ops", "ops"}}); err != nil {
		t.Errorf("the same caller again: %v", err)
	}
	for _, c := range []host.Caller{mallory, {Name: "dave", Groups: []string{"ops", "leads"}}, {Name: "dave"}, {Name: "lena", Groups: []string{"ops"}}} {
		if err := h.SetCaller("s", c); !errors.Is(err, host.ErrCallerRebound) {
			t.Errorf("rebinding to %+v: %v, want ErrCallerRebound", c, err)
		}
	}
	groups[0] = "leads" // the caller's slice, changed after binding
	if c, ok := h.CallerOf("s"); !ok || c.Name != "dave" || strings.Join(c.Groups, ",") != "ops" {
		t.Errorf("bound caller %+v %v", c, ok)
	}
	if d := h.Check(ctx, callOf("s", "deploy", tool(t, rollback))); d.Decision != host.Deny {
		t.Errorf("dave reached rollback: %v", d.Decision)
	}
	if err := h.SetCaller("x", host.Caller{}); err == nil {
		t.Error("a caller with no name was bound")
	}
	// An ended session is forgotten, binding included.
	h.EndSession("s")
	if _, ok := h.CallerOf("s"); ok {
		t.Error("the binding outlived the session")
	}
}

// A tool's rule narrows its app's and never widens it: naming a caller
// the app refuses does not let it in.
func TestAToolRuleCannotWidenItsApps(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, callerConfig+"[apps.deploy.tools.deploy_app]\nprincipals = [\"mallory\"]\n", host.Defaults())
	bind(t, h, "m", mallory)
	bind(t, h, "a", alice)
	tl := tool(t, deployApp)
	if d := h.Check(context.Background(), callOf("m", "deploy", tl)); d.Decision != host.Deny || d.Reasons[0].Code != policy.CodePrincipalNotAllowed ||
		!strings.Contains(d.Reasons[0].Message, "(apps.deploy)") {
		t.Errorf("mallory: %v %+v", d.Decision, d.Reasons)
	}
	// And alice, whom the app admits, is narrowed out by the tool's list.
	if d := h.Check(context.Background(), callOf("a", "deploy", tl)); d.Decision != host.Deny || !strings.Contains(d.Reasons[0].Message, "(apps.deploy.tools.deploy_app)") {
		t.Errorf("alice: %v %+v", d.Decision, d.Reasons)
	}
}

// An "always" approval one caller granted opens the tool to nobody the
// principal rule refuses: the gate comes before remembered approvals.
func TestAnAlwaysApprovalDoesNotOpenTheToolToACallerTheRuleRefuses(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, callerConfig, host.Defaults().WithApprovalsFile(filepath.Join(t.TempDir(), "approvals.json")))
	ctx := context.Background()
	tl := tool(t, deployApp)
	bind(t, h, "a", alice)
	d := h.Check(ctx, callOf("a", "deploy", tl))
	if err := h.Approve("a", &d, host.Always); err != nil {
		t.Fatal(err)
	}
	bind(t, h, "a2", alice)
	if d := h.Check(ctx, callOf("a2", "deploy", tl)); d.Decision != host.Allow || d.Reasons[0].Code != policy.CodeRemembered {
		t.Fatalf("alice's next session: %v %+v (the approval must be in force)", d.Decision, d.Reasons)
	}
	bind(t, h, "m", mallory)
	if d := h.Check(ctx, callOf("m", "deploy", tl)); d.Decision != host.Deny || d.Reasons[0].Code != policy.CodePrincipalNotAllowed {
		t.Errorf("mallory: %v %+v", d.Decision, d.Reasons)
	}
	if d := h.Check(ctx, callOf("local", "deploy", tl)); d.Decision != host.Deny || d.Reasons[0].Code != policy.CodePrincipalNotAllowed {
		t.Errorf("no caller: %v %+v", d.Decision, d.Reasons)
	}
}

// A caller who is not an approver cannot approve its own call through any
// scope of Approve, nor with the decision's approvers erased, and nothing
// is remembered: its next call still asks. An approver's approval counts.
func TestACallerWhoIsNotAnApproverCannotApproveItsOwnCall(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "approvals.json")
	h := testhost.New(t, callerConfig+"[apps.deploy.tools.deploy_app]\napprovers = [\"lena\"]\n", host.Defaults().WithApprovalsFile(file))
	ctx := context.Background()
	tl := tool(t, deployApp)
	bind(t, h, "d", opsDave)
	d := h.Check(ctx, callOf("d", "deploy", tl))
	if d.Decision != host.Ask || d.MayApprove(opsDave) {
		t.Fatalf("dave: %v %+v, may approve: %v", d.Decision, d.Reasons, d.MayApprove(opsDave))
	}
	for _, scope := range []host.Scope{host.Once, host.ForSession, host.Always} {
		if err := h.Approve("d", &d, scope); !errors.Is(err, host.ErrNotApprover) || !strings.Contains(err.Error(), "needs approval by lena") {
			t.Errorf("dave's own approval (%s): %v", scope, err)
		}
	}
	forged := d
	forged.Approvers = nil
	if err := h.Approve("d", &forged, host.ForSession); !errors.Is(err, host.ErrNotApprover) {
		t.Errorf("approval with the approvers erased: %v", err)
	}
	if d := h.Check(ctx, callOf("d", "deploy", tl)); d.Decision != host.Ask {
		t.Errorf("after the refused approvals: %v %+v", d.Decision, d.Reasons)
	}
	if grants, err := h.Approvals().List(); err != nil || len(grants) != 0 {
		t.Errorf("the approvals file holds %v (%v)", grants, err)
	}
	// lena, the approver, answers her own ask: it counts.
	bind(t, h, "l", lead)
	d = h.Check(ctx, callOf("l", "deploy", tl))
	if d.Decision != host.Ask || !d.MayApprove(lead) {
		t.Fatalf("lena: %v %+v", d.Decision, d.Reasons)
	}
	if err := h.Approve("l", &d, host.ForSession); err != nil {
		t.Fatalf("lena's approval: %v", err)
	}
	if d := h.Check(ctx, callOf("l", "deploy", tl)); d.Decision != host.Allow {
		t.Errorf("lena after approving: %v", d.Decision)
	}
	// A lead's approval of rollback counts by group.
	rb := tool(t, rollback)
	d = h.Check(ctx, callOf("l", "deploy", rb))
	if err := h.Approve("l", &d, host.Once); err != nil {
		t.Errorf("a lead approving rollback: %v", err)
	}
}

// A session with no caller approves no ask that only approvers may answer
// (the ask is a deny there anyway; a forged ask is refused too).
func TestASessionWithNoCallerCannotApproveForApprovers(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, callerConfig+"[apps.fs]\napprovers = [\"group:leads\"]\n", host.Defaults())
	d := h.Check(context.Background(), callOf("local", "fs", tool(t, writeFile)))
	if d.Decision != host.Deny || d.Reasons[len(d.Reasons)-1].Code != policy.CodeApproverRequired {
		t.Fatalf("%v %+v", d.Decision, d.Reasons)
	}
	forged := d
	forged.Decision = host.Ask
	if err := h.Approve("local", &forged, host.Once); !errors.Is(err, host.ErrNotApprover) {
		t.Errorf("approval with no caller: %v", err)
	}
}

func names(ts []*host.Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// A reload that removes a caller from a rule takes effect at its next
// call: the binding outlives the reload, the rule it is judged by does not.
func TestAReloadThatRemovesACallerDeniesItsNextCall(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, callerConfig, host.Defaults())
	ctx := context.Background()
	tl := tool(t, deployApp)
	bind(t, h, "a", alice)
	if d := h.Check(ctx, callOf("a", "deploy", tl)); d.Decision != host.Ask {
		t.Fatalf("before the reload: %v %+v", d.Decision, d.Reasons)
	}
	if err := h.Reload(ctx, testhost.Config(t, strings.Replace(callerConfig, `principals = ["alice"]`, `principals = ["bob"]`, 1))); err != nil {
		t.Fatal(err)
	}
	if d := h.Check(ctx, callOf("a", "deploy", tl)); d.Decision != host.Deny || d.Reasons[0].Code != policy.CodePrincipalNotAllowed {
		t.Errorf("after the reload: %v %+v", d.Decision, d.Reasons)
	}
}

// BenchmarkCheckCaller is BenchmarkCheck's call with principals in play:
// "none" is BenchmarkCheck itself (no rule, no caller: the local front
// ends), the baseline of the same run; "caller" binds a caller and
// restricts the tool to its group, with approvers named.
func BenchmarkCheckCaller(b *testing.B) {
	const restricted = "\n[apps.fs.tools.write_file]\ngroups = [\"dev\", \"ops\"]\napprovers = [\"group:leads\"]\n"
	for _, c := range []struct {
		name, config string
		caller       *host.Caller
	}{
		{"none", benchConfig, nil},
		{"caller", benchConfig + restricted, &host.Caller{Name: "dave", Groups: []string{"staff", "ops"}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := testhost.New(b, c.config, host.Defaults())
			if c.caller != nil {
				if err := h.SetCaller("s", *c.caller); err != nil {
					b.Fatal(err)
				}
			}
			call := host.Call{Session: "s", Server: "fs", Tool: tool(b, writeFile), Arguments: json.RawMessage(`{"path":"/home/me/src/notes.txt","content":"hello"}`)}
			ctx := context.Background()
			h.Check(ctx, call) // pin
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if d := h.Check(ctx, call); d.Decision != host.Ask {
					b.Fatal(d.Decision, d.Reasons)
				}
			}
		})
	}
}

// Two callers racing to bind one new session: exactly one wins, and the
// session decides as the winner.
func TestTwoCallersRacingForOneSessionCannotBothHaveIt(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, callerConfig, host.Defaults())
	for round := 0; round < 50; round++ {
		id := "race" + string(rune('a'+round%26)) + string(rune('a'+round/26))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, c := range []host.Caller{alice, mallory} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = h.SetCaller(id, c)
			}()
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: errors %v", round, errs)
		}
		winner, _ := h.CallerOf(id)
		want := host.Deny
		if winner.Name == "alice" {
			want = host.Ask
		}
		if d := h.Check(context.Background(), callOf(id, "deploy", tool(t, deployApp))); d.Decision != want {
			t.Fatalf("round %d: %s won, decision %v", round, winner.Name, d.Decision)
		}
	}
}

// A gateway binds at every request: binding the caller already bound
// allocates nothing. (Not parallel: AllocsPerRun counts the process's.)
func TestBindingTheSameCallerAgainAllocatesNothing(t *testing.T) {
	h := testhost.New(t, callerConfig, host.Defaults())
	bind(t, h, "s", lead)
	again := host.Caller{Name: "lena", Groups: []string{"leads", "ops"}}
	if n := testing.AllocsPerRun(100, func() { _ = h.SetCaller("s", again) }); n != 0 {
		t.Errorf("binding the same caller again allocates %v times", n)
	}
}
