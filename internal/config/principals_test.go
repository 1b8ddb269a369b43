package config

import (
	"slices"
	"strings"
	"testing"
)

// The principal keys read on an app and on its tools, as lists kept in
// the order written; an absent key stays nil (everyone), an empty list is
// a rule that admits no one by that list.
func TestPrincipalKeysReadOnAppsAndTools(t *testing.T) {
	t.Parallel()
	cfg, err := LoadBytes("c.toml", []byte(`
[apps.deploy]
principals = ["alice", "bob"]
groups = ["ops"]
approvers = ["group:leads", "carol"]
[apps.deploy.tools.rollback]
groups = []
approvers = ["carol"]
[apps.deploy.tools.status]
enabled = true
`))
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Apps["deploy"]
	if !slices.Equal(a.Principals, []string{"alice", "bob"}) || !slices.Equal(a.Groups, []string{"ops"}) ||
		!slices.Equal(a.Approvers, []string{"group:leads", "carol"}) {
		t.Errorf("app access read as %+v", a.Access)
	}
	rb := a.Tools["rollback"]
	if rb.Principals != nil || rb.Groups == nil || len(rb.Groups) != 0 || !rb.Restricts() {
		t.Errorf("rollback: groups = [] must be a rule (non-nil, empty) and principals absent (nil); got %+v", rb.Access)
	}
	if st := a.Tools["status"]; !st.Access.Empty() || st.Restricts() {
		t.Errorf("status sets no access keys, got %+v", st.Access)
	}
}

// Each bad name is an error at the exact entry (file:line:col) that says
// what to write instead; none is read as a name that would silently never
// match.
func TestBadPrincipalNamesAreErrorsAtTheEntry(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, body, at, want string }{
		{"a group written as a principal", `principals = ["alice", "group:ops"]`, "c.toml:3:24", `"group:ops" names a group, and principals holds principal names: move it to groups = ["ops"]`},
		{"a group prefix in another case, as a principal", `principals = ["Group:ops"]`, "c.toml:3:15", `move it to groups = ["ops"]`},
		{"a prefixed group name", `groups = ["group:ops"]`, "c.toml:3:11", `write "ops"`},
		{"a trailing space", `groups = ["ops "]`, "c.toml:3:11", `"ops " has spaces at its start or end, and names are compared exactly: write "ops"`},
		{"a leading tab", "principals = [\"\\talice\"]", "c.toml:3:15", `write "alice"`},
		{"an empty name", `approvers = [""]`, "c.toml:3:14", "empty name"},
		{"an empty group after the prefix", `approvers = ["group:"]`, "c.toml:3:14", `"group:": the group's name: empty name`},
		{"a capitalised group prefix", `approvers = ["Group:leads"]`, "c.toml:3:14", `write "group:leads"`},
		{"a plural group prefix", `approvers = ["groups:leads"]`, "c.toml:3:14", `write "group:leads"`},
		{"a name listed twice", `principals = ["alice", "alice"]`, "c.toml:3:24", `"alice" is listed twice`},
		{"a control character", "groups = [\"o\\u0000ps\"]", "c.toml:3:11", "control character"},
		{"not an array", `principals = "alice"`, "c.toml:3:1", "expected an array of names"},
		{"a number in the list", `groups = [7]`, "c.toml:3:11", "expected a name (a string), got integer 7"},
		{"a near spelling of the key", `principal = ["alice"]`, "c.toml:3:1", `unknown key "principal" (did you mean "principals"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadBytes("c.toml", []byte("\n[apps.deploy]\n"+tc.body+"\n"))
			if err == nil {
				t.Fatalf("%s loaded", tc.body)
			}
			if !strings.Contains(err.Error(), tc.at+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q; want it at %s saying %q", err, tc.at, tc.want)
			}
		})
	}
}

// The same names are checked in a tool's table.
func TestBadPrincipalNamesInAToolTableAreErrorsToo(t *testing.T) {
	t.Parallel()
	_, err := LoadBytes("c.toml", []byte("[apps.deploy.tools.rollback]\nprincipals = [\"group:ops\"]\n"))
	if err == nil || !strings.Contains(err.Error(), "c.toml:2:15: apps.deploy.tools.rollback.principals[0]: ") {
		t.Errorf("error %v; want one at the entry", err)
	}
}

// [apps._default] takes none of the keys: an app's own table replaces
// _default, so a rule there would stop at the first app anyone configures.
// The error says where the key belongs.
func TestPrincipalKeysOnDefaultAreRefusedWithWhereTheyBelong(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"principals", "groups", "approvers"} {
		_, err := LoadBytes("c.toml", []byte("[apps._default]\n"+k+" = [\"ops\"]\n"))
		if err == nil || !strings.Contains(err.Error(), "c.toml:2:1: apps._default."+k+": "+k+" cannot be set on [apps._default]") ||
			!strings.Contains(err.Error(), "set it on [apps.<id>]") {
			t.Errorf("%s: %v", k, err)
		}
	}
}

// A tool's principals list that names someone its app can never admit is
// a warning: the tool cannot widen its app's rule, so the name is dead.
func TestAToolNamingAPrincipalItsAppExcludesIsWarned(t *testing.T) {
	t.Parallel()
	cfg, err := LoadBytes("c.toml", []byte(`[apps.deploy]
principals = ["alice"]
[apps.deploy.tools.rollback]
principals = ["alice", "mallory"]
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range cfg.Warnings {
		got = append(got, w.Error())
	}
	want := `c.toml:4:1: apps.deploy.tools.rollback.principals: "mallory" can never call this tool: [apps.deploy] admits only principals "alice", and a tool's rule narrows its app's, never widens it`
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("warnings %q; want one starting %q", got, want)
	}
	// With a groups list on the app, mallory may be admitted by a group:
	// nothing certain to warn about.
	cfg, err = LoadBytes("c.toml", []byte("[apps.deploy]\nprincipals = [\"alice\"]\ngroups = [\"ops\"]\n[apps.deploy.tools.rollback]\nprincipals = [\"mallory\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings %v; want none", cfg.Warnings)
	}
}

// An admin's requirements set the keys as a floor: they are kept apart
// from the user's (both must admit), whatever the user's layers write,
// and the paths they decide are marked required.
func TestRequiredPrincipalsAreAFloorUserLayersCannotWiden(t *testing.T) {
	t.Parallel()
	r, err := ParseRequirements("admin.toml", []byte(`
[apps.deploy]
groups = ["ops"]
[apps.deploy.tools.rollback]
approvers = ["group:leads"]
[apps.payroll]
principals = ["hr-bot"]
`))
	if err != nil {
		t.Fatal(err)
	}
	user, err := LoadBytes("user.toml", []byte(`
[apps.deploy]
groups = ["ops", "everyone"]
[apps.deploy.tools.rollback]
approvers = ["mallory"]
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := user.ApplyRequirements(r)
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Apps["deploy"]
	if !slices.Equal(d.Groups, []string{"ops", "everyone"}) {
		t.Errorf("the user's own rule is kept as written (it is narrowed, not replaced): %v", d.Groups)
	}
	want := []RequiredAccess{
		{Access: Access{Groups: []string{"ops"}}, Path: "apps.deploy"},
		{Tool: "rollback", Access: Access{Approvers: []string{"group:leads"}}, Path: "apps.deploy.tools.rollback"},
	}
	if len(d.RequiredAccess) != len(want) {
		t.Fatalf("required access %+v", d.RequiredAccess)
	}
	for i, w := range want {
		g := d.RequiredAccess[i]
		if g.Tool != w.Tool || g.Path != w.Path || !slices.Equal(g.Access.Groups, w.Access.Groups) ||
			!slices.Equal(g.Access.Approvers, w.Access.Approvers) || g.At.File != "admin.toml" || g.At.Line == 0 {
			t.Errorf("required[%d] = %+v, want %+v at admin.toml", i, g, w)
		}
	}
	if at, ok := cfg.RequiredBy("apps.deploy.groups"); !ok || at.File != "admin.toml" {
		t.Errorf("apps.deploy.groups not marked required: %v %v", at, ok)
	}
	// An app the user never configured gets the floor too.
	if p := cfg.Apps["payroll"]; p == nil || len(p.RequiredAccess) != 1 || !slices.Equal(p.RequiredAccess[0].Access.Principals, []string{"hr-bot"}) {
		t.Errorf("payroll: %+v", cfg.Apps["payroll"])
	}
	// The user's config is left alone.
	if len(user.Apps["deploy"].RequiredAccess) != 0 || user.Apps["payroll"] != nil {
		t.Error("ApplyRequirements changed the user's config")
	}
}

// Requirements' names are checked as a config's are.
func TestRequiredPrincipalNamesAreChecked(t *testing.T) {
	t.Parallel()
	_, err := ParseRequirements("admin.toml", []byte("[apps.deploy]\ngroups = [\"ops \"]\n"))
	if err == nil || !strings.Contains(err.Error(), "admin.toml:2:11: ") || !strings.Contains(err.Error(), `write "ops"`) {
		t.Errorf("error %v", err)
	}
}
