package policy_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// genRequirements builds a random requirements file over the ids and
// servers genConfig uses.
func genRequirements(r *rand.Rand) map[string]any {
	req := map[string]any{}
	if r.Intn(3) == 0 {
		all := []string{"untrusted", "on-failure", "on-request", "never"}
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		req["allowed_approval_policies"] = all[:1+r.Intn(3)]
	}
	if r.Intn(4) == 0 {
		req["allowed_sandbox_modes"] = []string{"read-only", "workspace-write"}
	}
	if r.Intn(3) == 0 {
		req["max_trust"] = []string{"none", "pinned"}[r.Intn(2)]
	}
	if r.Intn(3) == 0 {
		req["allowed_servers"] = []map[string]any{[]map[string]any{
			{"command": "srv"}, {"url": "https://example.invalid/mcp"}, {"command": "other"},
		}[r.Intn(3)]}
	}
	apps := map[string]any{}
	for _, id := range []string{"srv", "apps", "calendar", "drive"} {
		a := map[string]any{}
		if r.Intn(4) == 0 {
			a["enabled"] = false
		}
		if r.Intn(3) == 0 {
			tools := map[string]any{}
			for _, tn := range []string{"t", "u"} {
				tc := map[string]any{}
				if r.Intn(3) == 0 {
					tc["enabled"] = false
				}
				if r.Intn(2) == 0 {
					tc["approval_mode"] = []string{"auto", "prompt", "writes", "approve"}[r.Intn(4)]
				}
				tools[tn] = tc
			}
			a["tools"] = tools
		}
		if len(a) > 0 {
			apps[id] = a
		}
	}
	if len(apps) > 0 {
		req["apps"] = apps
	}
	return req
}

// strictness orders outcomes: hidden, then deny, ask, allow.
func strictness(d policy.Decision) int {
	switch {
	case d.Hidden:
		return 3
	case d.Decision == policy.Deny:
		return 2
	case d.Decision == policy.Ask:
		return 1
	}
	return 0
}

// TestRequirementsNeverLoosen is the property: for random user configs
// (genConfig) and random requirements, adding the requirements either
// refuses the config or never makes a decision looser.
func TestRequirementsNeverLoosen(t *testing.T) {
	t.Parallel()
	n := 2000
	if testing.Short() {
		n = 400
	}
	r := rand.New(rand.NewSource(20261126))
	var refused, stricter int
	for i := 0; i < n; i++ {
		var ubuf, rbuf bytes.Buffer
		if err := toml.NewEncoder(&ubuf).Encode(genConfig(r)); err != nil {
			t.Fatal(err)
		}
		if err := toml.NewEncoder(&rbuf).Encode(genRequirements(r)); err != nil {
			t.Fatal(err)
		}
		user, err := config.LoadBytes("gen.toml", ubuf.Bytes())
		if err != nil {
			t.Fatalf("generated config %d does not load: %v", i, err)
		}
		reqs, err := config.ParseRequirements("req.toml", rbuf.Bytes())
		if err != nil {
			t.Fatalf("generated requirements %d do not parse: %v\n%s", i, err, rbuf.String())
		}
		managed, err := user.ApplyRequirements(reqs)
		if err != nil {
			refused++
			continue
		}
		base, err := policy.Compile(user)
		if err != nil {
			t.Fatal(err)
		}
		floor, err := policy.Compile(managed)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 4; j++ {
			server := []string{"srv", "apps"}[r.Intn(2)]
			tool, def := genTool(r, []string{"", "calendar", "drive"})
			c := call{server: server, tool: tool, remembered: r.Intn(4) == 0, drifted: r.Intn(5) == 0}
			b, m := decide(t, base, c, def), decide(t, floor, c, def)
			if strictness(m) < strictness(b) {
				t.Fatalf("config %d, call %d: requirements loosened %s (hidden=%v) to %s (hidden=%v)\nuser:\n%s\nrequirements:\n%s\ncall: %+v %v\nwith: %+v\nwithout: %+v",
					i, j, b.Decision, b.Hidden, m.Decision, m.Hidden, ubuf.String(), rbuf.String(), c, def, m.Trace, b.Trace)
			}
			if strictness(m) > strictness(b) {
				stricter++
			}
		}
	}
	if refused == 0 || stricter == 0 {
		t.Errorf("%d refused, %d made stricter: the generator must reach both", refused, stricter)
	}
}

// TestRequirementsNameThemselves: where a requirement decided, the trace
// and the reason say "required by <file>:<line>".
func TestRequirementsNameThemselves(t *testing.T) {
	t.Parallel()
	user, err := config.LoadBytes("user.toml", []byte(`
[mcp_servers.fs]
command = "npx"

[mcp_servers.shell]
command = "sh"

[apps.fs.tools.write_file]
enabled = true

[apps.fs.tools.read_file]
approval_mode = "approve"
`))
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := config.ParseRequirements("/etc/toolwarden/requirements.toml", []byte(`
[[allowed_servers]]
command = "npx"

[apps.fs.tools.write_file]
enabled = false

[apps.fs.tools.read_file]
approval_mode = "prompt"
`))
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
	for _, tc := range []struct {
		name, server, tool, want string
		hidden                   bool
	}{
		{"a managed-disabled tool is hidden, required by its line", "fs", "write_file", "required by /etc/toolwarden/requirements.toml:6:1", true},
		{"a server outside allowed_servers is hidden, required by the list", "shell", "run", "required by /etc/toolwarden/requirements.toml:2:3", true},
		{"a managed approval mode asks, required by its line", "fs", "read_file", "required by /etc/toolwarden/requirements.toml:9:1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := map[string]any{"name": tc.tool, "inputSchema": map[string]any{"type": "object"},
				"annotations": map[string]any{"readOnlyHint": true}}
			d := decide(t, rules, call{server: tc.server, tool: oracleTool{name: tc.tool}}, def)
			if d.Hidden != tc.hidden || (!tc.hidden && d.Decision != policy.Ask) {
				t.Fatalf("%s hidden=%v, want hidden=%v (or ask)", d.Decision, d.Hidden, tc.hidden)
			}
			if len(d.Reasons) == 0 || !strings.Contains(d.Reasons[0].Message, tc.want) {
				t.Errorf("reasons %+v, want one saying %q", d.Reasons, tc.want)
			}
			if !strings.Contains(fmt.Sprint(d.Trace), tc.want) {
				t.Errorf("trace %+v, want %q", d.Trace, tc.want)
			}
		})
	}
}
