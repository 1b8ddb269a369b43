package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func req(name string) string { return filepath.Join("testdata", "requirements", name) }

// TestRequirementsHoldAgainstLoosening runs user and project layers that try
// to loosen an admin's requirements: each is refused or clamped. Cases
// named after a Codex test translate that test of codex-rs's config
// requirements.
func TestRequirementsHoldAgainstLoosening(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		reqs    []string
		layers  []string
		wantErr string // substring of the load error; "" for none
		check   func(t *testing.T, c *Config)
	}{
		{
			name:   "managed_disable_overrides_enabled_app: a user layer cannot re-enable a managed-disabled app",
			reqs:   []string{"admin.toml"},
			layers: []string{"user_enables_github.toml"},
			check: func(t *testing.T, c *Config) {
				if Bool(c.Apps["github"].Enabled, true) {
					t.Error("github is enabled")
				}
				wantRequired(t, c, "apps.github.enabled", "admin.toml:15:")
				wantOverride(t, c, "apps.github.enabled", "user_enables_github.toml:2:")
			},
		},
		{
			name:   "a project layer over the user layer cannot re-enable it either",
			reqs:   []string{"admin.toml"},
			layers: []string{"user_enables_github.toml", "project_enables_github.toml"},
			check: func(t *testing.T, c *Config) {
				if Bool(c.Apps["github"].Enabled, true) {
					t.Error("github is enabled")
				}
			},
		},
		{
			name: "a managed disable holds for an app no layer configures",
			reqs: []string{"admin.toml"},
			check: func(t *testing.T, c *Config) {
				if a := c.Apps["github"]; a == nil || Bool(a.Enabled, true) {
					t.Error("github is not disabled")
				}
				if len(c.Overrides) != 0 {
					t.Errorf("overrides %v, want none: the user set nothing", c.Overrides)
				}
			},
		},
		{
			name:   "managed_enable_does_not_override_disabled_app: a managed enable does not enable what the user disabled",
			reqs:   []string{"codex_managed_enable.toml"},
			layers: []string{"user_disables_calendar.toml"},
			check: func(t *testing.T, c *Config) {
				if Bool(c.Apps["calendar"].Enabled, true) {
					t.Error("calendar is enabled")
				}
			},
		},
		{
			name:    "a disallowed approval_policy is an error at the user's key naming the requirement",
			reqs:    []string{"admin.toml"},
			layers:  []string{"user_never.toml"},
			wantErr: `user_never.toml:1:1: approval_policy: "never" is not allowed: allowed_approval_policies = ["on-request", "untrusted"] required by testdata/requirements/admin.toml:2:1`,
		},
		{
			name:    "an unset approval_policy is refused when on-request is not allowed, rather than picking a value for the user",
			reqs:    []string{"only_untrusted.toml"},
			layers:  []string{"user_enables_github.toml"},
			wantErr: `user_enables_github.toml: approval_policy: unset (on-request), which allowed_approval_policies = ["untrusted"] required by`,
		},
		{
			name:   "an allowed approval_policy loads",
			reqs:   []string{"only_untrusted.toml"},
			layers: []string{"user_untrusted.toml"},
			check: func(t *testing.T, c *Config) {
				if c.ApprovalPolicy.Value != "untrusted" {
					t.Errorf("approval_policy %q", c.ApprovalPolicy.Value)
				}
			},
		},
		{
			name:    "a profile's disallowed approval_policy is refused too",
			reqs:    []string{"admin.toml"},
			layers:  []string{"user_profile_never.toml"},
			wantErr: `"never" is not allowed`,
		},
		{
			name:    "a disallowed sandbox_mode is an error",
			reqs:    []string{"admin.toml"},
			layers:  []string{"user_full_access.toml"},
			wantErr: `user_full_access.toml:1:1: sandbox_mode: "danger-full-access" is not allowed: allowed_sandbox_modes = ["read-only", "workspace-write"] required by`,
		},
		{
			name:   "servers not allowed by command or url identity are disabled",
			reqs:   []string{"admin.toml"},
			layers: []string{"user_servers.toml"},
			check: func(t *testing.T, c *Config) {
				for name, want := range map[string]bool{"filesystem": true, "shell": false, "remote": true, "other": false} {
					if got := Bool(c.Servers[name].Enabled, true); got != want {
						t.Errorf("%s enabled = %v, want %v", name, got, want)
					}
				}
				wantRequired(t, c, "mcp_servers.shell.enabled", "admin.toml:7:")
				wantRequired(t, c, "mcp_servers.other.enabled", "admin.toml:7:")
			},
		},
		{
			name:   "trust above max_trust is lowered, with a warning",
			reqs:   []string{"admin.toml"},
			layers: []string{"user_trust_full.toml"},
			check: func(t *testing.T, c *Config) {
				if c.Default.Trust != "pinned" || c.Servers["filesystem"].Trust != "pinned" {
					t.Errorf("trust = %q, %q, want pinned", c.Default.Trust, c.Servers["filesystem"].Trust)
				}
				var warned int
				for _, w := range c.Warnings {
					if strings.Contains(w.Message, `trust "full" lowered to "pinned": max_trust required by`) {
						warned++
					}
				}
				if warned != 2 {
					t.Errorf("%d trust warnings, want 2: %v", warned, c.Warnings)
				}
			},
		},
		{
			name:   "a user layer cannot disable a required policy",
			reqs:   []string{"admin.toml"},
			layers: []string{"user_disables_policy.toml"},
			check: func(t *testing.T, c *Config) {
				if len(c.Policies) != 1 || !Bool(c.Policies[0].Enabled, true) {
					t.Fatalf("policies %+v, want argguard enabled", c.Policies)
				}
				if !strings.HasSuffix(c.Policies[0].Pos.File, "admin.toml") {
					t.Errorf("argguard from %s, want the requirements file", c.Policies[0].Pos)
				}
				wantOverride(t, c, "policies.argguard", "user_disables_policy.toml")
			},
		},
		{
			name:   "a required policy runs with no user layer at all",
			reqs:   []string{"admin.toml"},
			layers: nil,
			check: func(t *testing.T, c *Config) {
				if len(c.Policies) != 1 || c.Policies[0].Name != "argguard" {
					t.Errorf("policies %+v, want argguard", c.Policies)
				}
			},
		},
		{
			name:   "a user layer cannot re-enable a managed-disabled tool",
			reqs:   []string{"admin.toml"},
			layers: []string{"user_enables_tool.toml"},
			check: func(t *testing.T, c *Config) {
				if Bool(c.Apps["filesystem"].Tools["write_file"].Enabled, true) {
					t.Error("write_file is enabled")
				}
				wantOverride(t, c, `apps.filesystem.tools.write_file.enabled`, "user_enables_tool.toml:2:")
			},
		},
		{
			name:   "restrict_to: a managed prompt wins over a user approve",
			reqs:   []string{"admin.toml"},
			layers: []string{"user_approves_search.toml"},
			check: func(t *testing.T, c *Config) {
				if m := c.Apps["docs"].RequiredModes["search"]; m != ModePrompt {
					t.Errorf("required mode %q, want prompt", m)
				}
				wantOverride(t, c, "apps.docs.tools.search.approval_mode", "user_approves_search.toml:2:")
			},
		},
		{
			name:   "restrict_to: a managed prompt wins over writes, and the app default does not reach the tool",
			reqs:   []string{"admin.toml"},
			layers: []string{"user_writes_search.toml"},
			check: func(t *testing.T, c *Config) {
				a := c.Apps["docs"]
				if m := RestrictMode(a.RequiredModes["search"], a.Tools["search"].ApprovalMode); m != ModePrompt {
					t.Errorf("mode %q, want prompt", m)
				}
			},
		},
		{
			name:    "required_policies must name a table of the requirements file",
			reqs:    []string{"bad_required_policy.toml"},
			wantErr: `bad_required_policy.toml:1:1: required_policies: names "nosuch", which this file does not define`,
		},
		{
			name:    "an unknown approval policy in a requirements file is an error",
			reqs:    []string{"bad_policy_value.toml"},
			wantErr: `bad_policy_value.toml:1:`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var reqs, layers []string
			for _, r := range tc.reqs {
				reqs = append(reqs, req(r))
			}
			for _, l := range tc.layers {
				layers = append(layers, req(l))
			}
			c, err := LoadWithRequirements(reqs, layers...)
			if tc.wantErr != "" {
				var le *LoadError
				if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want a *LoadError containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func wantRequired(t *testing.T, c *Config, path, at string) {
	t.Helper()
	p, ok := c.RequiredBy(path)
	if !ok || !strings.Contains(p.String(), at) {
		t.Errorf("RequiredBy(%s) = %s, %v; want at %s", path, p, ok, at)
	}
}

func wantOverride(t *testing.T, c *Config, path, user string) {
	t.Helper()
	for _, o := range c.Overrides {
		if o.Path == path && strings.Contains(o.User.String(), user) {
			return
		}
	}
	t.Errorf("no override of %s set at %s in %v", path, user, c.Overrides)
}

// TestRestrictMode is Codex's AppToolApproval::restrict_to table.
func TestRestrictMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ managed, requested, want Mode }{
		{ModePrompt, ModeApprove, ModePrompt},
		{ModePrompt, ModeAuto, ModePrompt},
		{ModeApprove, ModeAuto, ModeAuto},
		{ModeApprove, ModeWrites, ModeWrites},
		{ModeAuto, ModeApprove, ModeAuto},
		{ModeAuto, ModeWrites, ModePrompt},
		{ModeWrites, ModeAuto, ModePrompt},
		{ModeWrites, ModeWrites, ModeWrites},
		{ModeAuto, ModePrompt, ModePrompt},
		{ModeAuto, ModeUnset, ModeAuto},
	} {
		if got := RestrictMode(tc.managed, tc.requested); got != tc.want {
			t.Errorf("RestrictMode(%s, %s) = %s, want %s", tc.managed, tc.requested, got, tc.want)
		}
	}
}

// TestApplyRequirementsLeavesTheConfigAlone: a Config is never mutated
// after Load.
func TestApplyRequirementsLeavesTheConfigAlone(t *testing.T) {
	t.Parallel()
	c, err := Load(req("user_enables_github.toml"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := LoadRequirements(req("admin.toml"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := c.ApplyRequirements(r)
	if err != nil {
		t.Fatal(err)
	}
	if !Bool(c.Apps["github"].Enabled, true) || Bool(n.Apps["github"].Enabled, true) {
		t.Error("ApplyRequirements changed its receiver or did not apply")
	}
}

func TestRequirementsPathsAddEnvThenFlags(t *testing.T) {
	t.Parallel()
	got := RequirementsPaths(func(k string) string {
		if k == RequirementsEnv {
			return "/env/req.toml"
		}
		return ""
	}, "/flag/req.toml")
	n := len(got)
	if n < 2 || got[n-2] != "/env/req.toml" || got[n-1] != "/flag/req.toml" {
		t.Errorf("RequirementsPaths = %v, want the system files that exist, then the env's, then the flag's", got)
	}
}
