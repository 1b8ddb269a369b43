package config

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// layers builds named in-memory layers: name, data, name, data, ...
func layers(kv ...string) []Layer {
	var out []Layer
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, Layer{Name: kv[i], Data: []byte(kv[i+1])})
	}
	return out
}

func TestLaterLayersOverrideEarlierOnes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		layers []Layer
		check  func(t *testing.T, cfg *Config)
	}{
		{
			name:   "a later scalar replaces an earlier one",
			layers: layers("user.toml", `approval_policy = "never"`, "project.toml", `approval_policy = "on-request"`),
			check: func(t *testing.T, cfg *Config) {
				if cfg.ApprovalPolicy.Value != "on-request" || cfg.ApprovalPolicy.Pos.File != "project.toml" {
					t.Errorf("approval_policy = %+v", cfg.ApprovalPolicy)
				}
			},
		},
		{
			name: "tables merge key by key",
			layers: layers(
				"user.toml", "[apps.github]\nenabled = true\ndefault_tools_approval_mode = \"prompt\"\n[apps.github.tools.a]\nenabled = false\n",
				"project.toml", "[apps.github]\ndestructive_enabled = false\n[apps.github.tools.b]\napproval_mode = \"approve\"\n"),
			check: func(t *testing.T, cfg *Config) {
				a := cfg.Apps["github"]
				if !*a.Enabled || *a.DestructiveEnabled || a.DefaultToolsApprovalMode != ModePrompt || len(a.Tools) != 2 {
					t.Errorf("github = %+v", a)
				}
				if a.Pos.File != "user.toml" {
					t.Errorf("an app lives where it was first defined, got %s", a.Pos)
				}
			},
		},
		{
			name: "arrays replace rather than append",
			layers: layers(
				"user.toml", "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"a\", \"b\", \"c\"]\n",
				"project.toml", "[mcp_servers.fs]\nargs = [\"x\"]\n"),
			check: func(t *testing.T, cfg *Config) {
				if s := cfg.Servers["fs"]; s.Command != "npx" || !reflect.DeepEqual(s.Args, []string{"x"}) {
					t.Errorf("fs = %+v", s)
				}
			},
		},
		{
			name: "a later layer may give a server only the keys it changes",
			layers: layers(
				"user.toml", "[mcp_servers.fs]\ncommand = \"npx\"\n",
				"project.toml", "[mcp_servers.fs]\nenabled = false\ntools.write_file.approval_mode = \"prompt\"\n"),
			check: func(t *testing.T, cfg *Config) {
				s := cfg.Servers["fs"]
				if s.Command != "npx" || *s.Enabled || s.Tools["write_file"].ApprovalMode != ModePrompt {
					t.Errorf("fs = %+v", s)
				}
			},
		},
		{
			name: "a string approval_policy can be replaced by the granular form",
			layers: layers(
				"user.toml", `approval_policy = "never"`,
				"project.toml", "[approval_policy.granular]\nsandbox_approval = true\nrules = true\nmcp_elicitations = false\n"),
			check: func(t *testing.T, cfg *Config) {
				if cfg.ApprovalPolicy.Value != "granular" || cfg.ApprovalPolicy.Granular.MCPElicitations {
					t.Errorf("approval_policy = %+v", cfg.ApprovalPolicy)
				}
			},
		},
		{
			name: "granular settings merge across layers",
			layers: layers(
				"user.toml", "[approval_policy.granular]\nsandbox_approval = true\nrules = true\nmcp_elicitations = true\n",
				"project.toml", "approval_policy.granular.mcp_elicitations = false\n"),
			check: func(t *testing.T, cfg *Config) {
				if g := cfg.ApprovalPolicy.Granular; g == nil || *g != (Granular{SandboxApproval: true, Rules: true}) {
					t.Errorf("granular = %+v", g)
				}
			},
		},
		{
			name: "policies keep the order in which they were first defined",
			layers: layers(
				"user.toml", "[policies.b]\nbuiltin = \"b\"\n[policies.a]\nbuiltin = \"a\"\n",
				"project.toml", "[policies.c]\nbuiltin = \"c\"\n[policies.a]\nenabled = false\n[policies.0]\nbuiltin = \"z\"\n"),
			check: func(t *testing.T, cfg *Config) {
				var names []string
				for _, p := range cfg.Policies {
					names = append(names, p.Name)
				}
				if !reflect.DeepEqual(names, []string{"b", "a", "c", "0"}) {
					t.Errorf("policy order = %v", names)
				}
				if a := cfg.Policies[1]; *a.Enabled || a.Builtin != "a" {
					t.Errorf("a = %+v", a)
				}
			},
		},
		{
			name: "a wasm path resolves against the folder of the layer that set it",
			layers: layers(
				"/etc/toolwarden/base.toml", "[policies.p]\nwasm = \"plugins/p.wasm\"\n[policies.q]\nwasm = \"q.wasm\"\n",
				"/home/u/proj/.codex/config.toml", "[policies.q]\nwasm = \"../q.wasm\"\n"),
			check: func(t *testing.T, cfg *Config) {
				want := []string{"/etc/toolwarden/plugins/p.wasm", "/home/u/proj/q.wasm"}
				for i, p := range cfg.Policies {
					if p.Wasm != filepath.FromSlash(want[i]) {
						t.Errorf("%s.wasm = %s, want %s", p.Name, p.Wasm, want[i])
					}
				}
			},
		},
		{
			name:   "every layer is listed in load order",
			layers: layers("a.toml", "", "b.toml", "", "c.toml", ""),
			check: func(t *testing.T, cfg *Config) {
				if !reflect.DeepEqual(cfg.Files, []string{"a.toml", "b.toml", "c.toml"}) {
					t.Errorf("files = %v", cfg.Files)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadLayers(tt.layers...)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, cfg)
		})
	}
}

func TestLayeredErrorsPointAtTheLayerThatWon(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		layers []Layer
		want   string
	}{
		{
			name: "a bad value in a later layer is reported there",
			layers: layers(
				"user.toml", "[apps.x]\ndefault_tools_approval_mode = \"auto\"\n",
				"project.toml", "\n[apps.x]\ndefault_tools_approval_mode = \"sometimes\"\n"),
			want: `project.toml:3:1: apps.x.default_tools_approval_mode: unknown approval mode "sometimes"; want "auto", "prompt", "writes" or "approve"`,
		},
		{
			name: "a bad value overridden by a good one is no error",
			layers: layers(
				"user.toml", "[apps.x]\nenabled = \"yes\"\n[apps.y]\nenabled = 1\n",
				"project.toml", "[apps.x]\nenabled = true\n"),
			want: `user.toml:4:1: apps.y.enabled: expected a boolean (true or false), got integer 1`,
		},
		{
			name: "the transport is checked on the merged server",
			layers: layers(
				"user.toml", "[mcp_servers.fs]\ncommand = \"npx\"\n",
				"project.toml", "[mcp_servers.fs]\nurl = \"http://localhost/mcp\"\n"),
			want: "project.toml:2:1: mcp_servers.fs: `url` is not supported for stdio servers: remove it, or remove command to connect over streamable HTTP",
		},
		{
			name: "a server with no transport in any layer is reported where it was introduced",
			layers: layers(
				"user.toml", "[mcp_servers.fs]\nargs = [\"x\"]\n",
				"project.toml", "[mcp_servers.fs]\nenabled = false\n"),
			want: "user.toml:1:14: mcp_servers.fs: invalid transport: set command (stdio) or url (streamable HTTP)",
		},
		{
			name: "syntax errors in every layer are reported, and nothing else",
			layers: layers(
				"user.toml", "[apps.x\n",
				"ok.toml", "[apps.y]\nenabled = \"not checked\"\n",
				"project.toml", "a = 1\na = 2\n"),
			want: "user.toml:1:8: invalid TOML: expected '.' or ']' to end table name, but got '\\n' instead\n" +
				"project.toml:2:1: invalid TOML: Key 'a' has already been defined.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadLayers(tt.layers...)
			if err == nil {
				t.Fatal("loaded without error")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestTheMergeNeverAliasesALayer(t *testing.T) {
	t.Parallel()
	a := map[string]any{"apps": map[string]any{"x": map[string]any{"enabled": true}}}
	b := map[string]any{"apps": map[string]any{"x": map[string]any{"enabled": false}}}
	merged := map[string]any{}
	mergeTables(merged, a)
	mergeTables(merged, b)
	if a["apps"].(map[string]any)["x"].(map[string]any)["enabled"] != true {
		t.Error("merging a later layer changed an earlier one")
	}
	if !strings.Contains(describe(merged["apps"]), "table") {
		t.Error("merged apps is not a table")
	}
}
