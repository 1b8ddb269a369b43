package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/hints"
)

func ptr[T any](v T) *T { return &v }

// loadOK loads src as one layer and fails the test on any error.
func loadOK(t *testing.T, src string) *Config {
	t.Helper()
	cfg, err := LoadBytes("c.toml", []byte(src))
	if err != nil {
		t.Fatalf("unexpected error:\n%v", err)
	}
	return cfg
}

// loadErr loads src as one layer and returns the error text.
func loadErr(t *testing.T, src string) string {
	t.Helper()
	cfg, err := LoadBytes("c.toml", []byte(src))
	if err == nil {
		t.Fatalf("loaded without error: %+v", cfg)
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("error is %T, want *LoadError", err)
	}
	return err.Error()
}

func TestARealCodexConfigLoadsAndMeansWhatItMeansToCodex(t *testing.T) {
	t.Parallel()
	cfg, err := Load("testdata/codex-full.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %v", cfg.Warnings)
	}
	if cfg.ApprovalPolicy.Value != "on-request" || cfg.ApprovalPolicy.Pos.String() != "testdata/codex-full.toml:12:1" {
		t.Errorf("approval_policy = %+v", cfg.ApprovalPolicy)
	}
	wantDefault := AppDefault{
		Enabled: ptr(true), DestructiveEnabled: ptr(false), OpenWorldEnabled: ptr(true),
		DefaultToolsApprovalMode: ModeAuto, ApprovalsReviewer: "user",
		Pos: Position{"testdata/codex-full.toml", 121, 7},
	}
	if !cfg.HasDefault || !reflect.DeepEqual(cfg.Default, wantDefault) {
		t.Errorf("_default = %+v, want %+v", cfg.Default, wantDefault)
	}
	if got := sortedIDs(cfg.Apps); !reflect.DeepEqual(got, []string{"asdk_app_6a1b2c", "connector_2128aebfecb84f64a069897515042a44", "google_drive"}) {
		t.Errorf("apps = %v", got)
	}
	gd := cfg.Apps["google_drive"]
	if *gd.DestructiveEnabled || *gd.OpenWorldEnabled || gd.DefaultToolsApprovalMode != ModePrompt {
		t.Errorf("google_drive = %+v", gd)
	}
	if tool := gd.Tools["Delete File"]; tool == nil || *tool.Enabled || tool.Pos.Line != 138 {
		t.Errorf(`tools."Delete File" = %+v`, tool)
	}
	if tool := gd.Tools["search"]; tool == nil || tool.ApprovalMode != ModeApprove {
		t.Errorf(`tools.search = %+v`, tool)
	}
	asdk := cfg.Apps["asdk_app_6a1b2c"]
	if asdk.Enabled != nil || !*asdk.DefaultToolsEnabled || asdk.DefaultToolsApprovalMode != ModeWrites || asdk.ApprovalsReviewer != "auto_review" || !*asdk.DisableToolSuggest {
		t.Errorf("asdk app = %+v", asdk)
	}
	if link := asdk.Links["link_work"]; link == nil || *link != (AppLink{ApprovalsReviewer: "auto_review", DefaultToolsApprovalMode: ModePrompt}) {
		t.Errorf("link = %+v (guardian_subagent is the legacy name of auto_review)", link)
	}

	if got := sortedIDs(cfg.Servers); !reflect.DeepEqual(got, []string{"docs", "figma", "filesystem", "linear", "memory"}) {
		t.Errorf("servers = %v", got)
	}
	fs := cfg.Servers["filesystem"]
	wantFS := &Server{
		Name: "filesystem", Command: "npx",
		Args:    []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/dana/src"},
		Env:     map[string]string{"NODE_OPTIONS": "--max-old-space-size=512"},
		EnvVars: []EnvVar{{Name: "HOME"}, {Name: "GITHUB_TOKEN", Source: "local"}},
		Cwd:     "/Users/dana/src", StartupTimeoutSec: ptr(20.0), ToolTimeoutSec: ptr(120.5),
		EnabledTools:             []string{"read_file", "read_text_file", "list_directory", "search_files", "write_file", "edit_file"},
		DisabledTools:            []string{"move_file"},
		DefaultToolsApprovalMode: ModeWrites,
		Tools: map[string]*ServerTool{"read_file": {
			ApprovalMode: ModeApprove, OutputTokenLimit: 20000,
			Pos: Position{"testdata/codex-full.toml", 167, 31},
		}},
		SupportsParallelToolCalls: true,
		Pos:                       Position{"testdata/codex-full.toml", 154, 14},
	}
	if !reflect.DeepEqual(fs, wantFS) {
		t.Errorf("filesystem =\n%+v\nwant\n%+v", fs, wantFS)
	}
	if fs.Transport() != "stdio" || fs.StartupTimeout() != 20*time.Second || fs.ToolTimeout() != 120500*time.Millisecond {
		t.Errorf("filesystem transport/timeouts: %s %v %v", fs.Transport(), fs.StartupTimeout(), fs.ToolTimeout())
	}
	if mem := cfg.Servers["memory"]; !mem.Required || mem.StartupTimeout() != 15*time.Second || mem.ToolTimeout() != DefaultToolTimeout {
		t.Errorf("memory: startup_timeout_ms = 15000 must read as 15 s: %+v", mem)
	}
	linear := cfg.Servers["linear"]
	if linear.Transport() != "streamable_http" || linear.BearerTokenEnvVar != "LINEAR_API_KEY" ||
		linear.HTTPHeaders["X-Client"] != "codex" || linear.EnvHTTPHeaders["X-Org"] != "LINEAR_ORG" ||
		!reflect.DeepEqual(linear.Scopes, []string{"read", "write"}) || linear.OAuthResource != "https://mcp.linear.app" {
		t.Errorf("linear = %+v", linear)
	}
	figma := cfg.Servers["figma"]
	if *figma.Enabled || figma.Auth != "oauth" || *figma.OAuth != (OAuth{"codex-cli", "http://127.0.0.1:33418/callback", 33418}) ||
		figma.Tools["get_code"].ApprovalMode != ModePrompt {
		t.Errorf("figma = %+v", figma)
	}
	docs := cfg.Servers["docs"]
	if docs.HTTPHeadersHelper == "" || docs.EnvironmentID != "local" || !reflect.DeepEqual(docs.OmitToolsFrom, []string{"tool_search"}) {
		t.Errorf("docs = %+v", docs)
	}
	if len(cfg.Policies) != 0 {
		t.Errorf("policies = %v", cfg.Policies)
	}
}

func TestToolwardenKeysLoad(t *testing.T) {
	t.Parallel()
	cfg, err := Load("testdata/toolwarden-full.toml")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Granular{SandboxApproval: true, SkillApproval: true, RequestPermissions: true}); cfg.ApprovalPolicy.Value != "granular" || *cfg.ApprovalPolicy.Granular != want {
		t.Errorf("approval_policy = %+v", cfg.ApprovalPolicy)
	}
	if cfg.Default.Trust != "none" || cfg.Default.DefaultToolsApprovalMode != ModeWrites {
		t.Errorf("_default = %+v", cfg.Default)
	}
	gh := cfg.Apps["github"]
	var appHints hints.Set
	appHints.Put(hints.OpenWorld, hints.True)
	appHints.Put(hints.ReadsPrivateData, hints.True)
	if !*gh.ReadOnly || gh.Trust != "full" || gh.Hints != appHints {
		t.Errorf("github = %+v", gh)
	}
	var toolHints hints.Set
	toolHints.Put(hints.CanExfiltrate, hints.True)
	toolHints.Put(hints.Destructive, hints.False)
	if ci := gh.Tools["create_issue"]; ci.ApprovalMode != ModePrompt || ci.Hints != toolHints {
		t.Errorf("create_issue = %+v", ci)
	}
	if s := cfg.Servers["github"]; s.Trust != "pinned" || s.Connectors {
		t.Errorf("github server = %+v", s)
	}
	if s := cfg.Servers["github"]; !slices.Equal(s.ClientCapabilities, []string{"elicitation"}) {
		t.Errorf("github client_capabilities = %q", s.ClientCapabilities)
	}
	if s := cfg.Servers["codex_apps"]; s.ClientCapabilities != nil {
		t.Errorf("codex_apps client_capabilities = %q, want nil (all)", s.ClientCapabilities)
	}
	if s := cfg.Servers["codex_apps"]; !s.Connectors {
		t.Errorf("codex_apps server = %+v", s)
	}
	if len(cfg.Policies) != 2 {
		t.Fatalf("policies = %v", cfg.Policies)
	}
	tri, guard := cfg.Policies[0], cfg.Policies[1]
	if tri.Name != "trifecta" || tri.Builtin != "trifecta" || tri.OnError != "deny" || tri.Enabled != nil ||
		!reflect.DeepEqual(tri.Config, map[string]any{"mode": "ask", "labels": []any{"private_data_seen"}}) {
		t.Errorf("trifecta = %+v", tri)
	}
	abs, _ := filepath.Abs("testdata/plugins/guard.wasm")
	want := &Policy{
		Name: "guard", Wasm: abs, Apps: []string{"github", "fs*"}, Tools: []string{"write_*", "create_?ssue"},
		Config:    map[string]any{"rules": []any{map[string]any{"tool": "write_file", "arg": "path", "deny_glob": "/etc/**"}}},
		TimeoutMs: 50, MemoryLimitMB: 32, MaxOutputKB: 64, OnError: "ask", CanApprove: true, Enabled: ptr(false),
		Pos: Position{"testdata/toolwarden-full.toml", 33, 11},
	}
	if !reflect.DeepEqual(guard, want) {
		t.Errorf("guard =\n%+v\nwant\n%+v", guard, want)
	}
}

func TestAnEmptyConfigMeansCodexDefaults(t *testing.T) {
	t.Parallel()
	cfg := loadOK(t, "# nothing\nmodel = \"gpt-5\"\n")
	if cfg.ApprovalPolicy.Value != "" || cfg.HasDefault || len(cfg.Apps)+len(cfg.Servers)+len(cfg.Policies) != 0 {
		t.Errorf("empty config = %+v", cfg)
	}
	if !Bool(cfg.Default.Enabled, true) || !Bool(cfg.Default.DestructiveEnabled, true) || !Bool(cfg.Default.OpenWorldEnabled, true) {
		t.Error("unset _default keys must read as true")
	}
	s := loadOK(t, "[mcp_servers.fs]\ncommand = \"x\"\n").Servers["fs"]
	if s.StartupTimeout() != 30*time.Second || s.ToolTimeout() != 300*time.Second || !Bool(s.Enabled, true) ||
		s.Required || s.EnabledTools != nil || s.DefaultToolsApprovalMode != ModeUnset {
		t.Errorf("server defaults = %+v", s)
	}
	a := loadOK(t, "[apps.x]\n").Apps["x"]
	if a.Enabled != nil || !Bool(a.Enabled, true) {
		t.Errorf("an [apps.x] table without enabled must be enabled (Codex): %+v", a)
	}
}

func TestTheEmbeddedDefaultIsCodexDefaultsWrittenOut(t *testing.T) {
	t.Parallel()
	for _, cfg := range []*Config{Default(), func() *Config { c, _ := Load(); return c }()} {
		want := AppDefault{
			Enabled: ptr(true), DestructiveEnabled: ptr(true), OpenWorldEnabled: ptr(true),
			DefaultToolsApprovalMode: ModeAuto, Trust: "pinned", Pos: cfg.Default.Pos,
		}
		if cfg.ApprovalPolicy.Value != "on-request" || !cfg.HasDefault || !reflect.DeepEqual(cfg.Default, want) {
			t.Errorf("default = %+v %+v", cfg.ApprovalPolicy, cfg.Default)
		}
		if len(cfg.Files) != 0 || len(cfg.Warnings) != 0 || len(cfg.Apps)+len(cfg.Servers)+len(cfg.Policies) != 0 {
			t.Errorf("default has files, warnings or entries: %+v", cfg)
		}
		if got := cfg.Default.Pos.String(); got != "<embedded default>" {
			t.Errorf("default position = %q", got)
		}
	}
	if data, _ := os.ReadFile("default.toml"); !bytes.Equal(DefaultTOML(), data) {
		t.Error("DefaultTOML differs from default.toml")
	}
	if a, b := Default(), Default(); a == b {
		t.Error("Default must return a fresh Config each call")
	}
}

func TestEveryKeyIsTypeChecked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
	}{
		{"an app table must be a table", "apps.github = true", `c.toml:1:6: apps.github: expected a table, got boolean true`},
		{"apps itself must be a table", `apps = "all"`, `c.toml:1:1: apps: expected a table, got string "all"`},
		{"a boolean must not be a string", "[apps.x]\nopen_world_enabled = \"false\"", `c.toml:2:1: apps.x.open_world_enabled: expected a boolean (true or false), got string "false"`},
		{"default_tools_enabled is a boolean", "[apps.x]\ndefault_tools_enabled = 1", `apps.x.default_tools_enabled: expected a boolean (true or false), got integer 1`},
		{"read_only is a boolean", "[apps.x]\nread_only = \"yes\"", `apps.x.read_only: expected a boolean`},
		{"disable_tool_suggest is a boolean", "[apps.x]\ndisable_tool_suggest = []", `apps.x.disable_tool_suggest: expected a boolean (true or false), got array`},
		{"tools must be tables", "[apps.x.tools]\nsearch = true", `c.toml:2:1: apps.x.tools.search: expected a table, got boolean true`},
		{"a tool's enabled is a boolean", "[apps.x.tools.t]\nenabled = 0", `apps.x.tools.t.enabled: expected a boolean`},
		{"a tool's keys are checked", "[apps.x.tools.t]\napproval = \"approve\"", `c.toml:2:1: apps.x.tools.t: unknown key "approval" (did you mean "approval_mode"?)`},
		{"a link's keys are checked", "[apps.x.links.l]\nreviewer = \"user\"", `c.toml:2:1: apps.x.links.l: unknown key "reviewer"`},
		{"approvals_reviewer is an enum", "[apps._default]\napprovals_reviewer = \"me\"", `apps._default.approvals_reviewer: unknown approvals reviewer "me"; want "user" or "auto_review"`},
		{"hints must be a table", "[apps.x]\nhints = [\"readOnlyHint\"]", `apps.x.hints: expected a table, got array`},
		{"hint values are booleans", "[apps.x]\nhints = { readOnlyHint = 1 }", `c.toml:2:11: apps.x.hints.readOnlyHint: expected a boolean (true or false), got integer 1`},
		{"_default does not take hints", "[apps._default]\nhints = {}", `apps._default: unknown key "hints"`},
		{"command is a string", "[mcp_servers.s]\ncommand = [\"npx\"]", `mcp_servers.s.command: expected a string, got array`},
		{"args elements are strings", "[mcp_servers.s]\ncommand = \"x\"\nargs = [\"a\", 1.5]", `c.toml:3:14: mcp_servers.s.args[1]: expected a string, got float 1.5`},
		{"env is a table of strings", "[mcp_servers.s]\ncommand = \"x\"\nenv = [\"A=1\"]", `mcp_servers.s.env: expected a table, got array`},
		{"env_vars is an array", "[mcp_servers.s]\ncommand = \"x\"\nenv_vars = \"HOME\"", `mcp_servers.s.env_vars: expected an array of variable names, got string "HOME"`},
		{"env_vars tables have name and source only", "[mcp_servers.s]\ncommand = \"x\"\nenv_vars = [{ nam = \"A\" }]", `mcp_servers.s.env_vars[0]: unknown key "nam" (did you mean "name"?)`},
		{"required is a boolean", "[mcp_servers.s]\ncommand = \"x\"\nrequired = \"no\"", `mcp_servers.s.required: expected a boolean`},
		{"timeouts are numbers", "[mcp_servers.s]\ncommand = \"x\"\nstartup_timeout_sec = \"30\"", `mcp_servers.s.startup_timeout_sec: expected a number of seconds, got string "30"`},
		{"timeouts are finite", "[mcp_servers.s]\ncommand = \"x\"\ntool_timeout_sec = inf", `mcp_servers.s.tool_timeout_sec: +Inf seconds is too long; at most 9223372036`},
		{"timeouts are not NaN", "[mcp_servers.s]\ncommand = \"x\"\ntool_timeout_sec = nan", `mcp_servers.s.tool_timeout_sec: expected a non-negative number of seconds, got float NaN`},
		{"startup_timeout_ms is an integer", "[mcp_servers.s]\ncommand = \"x\"\nstartup_timeout_ms = 1.5", `mcp_servers.s.startup_timeout_ms: expected a non-negative integer (milliseconds), got float 1.5`},
		{"enabled_tools is an array", "[mcp_servers.s]\ncommand = \"x\"\nenabled_tools = \"read_file\"", `mcp_servers.s.enabled_tools: expected an array of strings, got string "read_file"`},
		{"auth is an enum", "[mcp_servers.s]\nurl = \"http://x\"\nauth = \"basic\"", `mcp_servers.s.auth: unknown auth method "basic"; want "oauth" or "chatgpt"`},
		{"oauth keys are checked", "[mcp_servers.s]\nurl = \"http://x\"\noauth = { client = \"x\" }", `mcp_servers.s.oauth: unknown key "client" (did you mean "client_id"?)`},
		{"oauth callback_port is a port", "[mcp_servers.s]\nurl = \"http://x\"\noauth = { callback_port = 70000 }", `mcp_servers.s.oauth.callback_port: expected an integer from 1 to 65535 (a TCP port), got 70000`},
		{"server tool keys are checked", "[mcp_servers.s]\ncommand = \"x\"\n[mcp_servers.s.tools.t]\nenabled = false", `c.toml:4:1: mcp_servers.s.tools.t: unknown key "enabled"`},
		{"output_token_limit is positive", "[mcp_servers.s]\ncommand = \"x\"\ntools.t.output_token_limit = 0", `mcp_servers.s.tools.t.output_token_limit: expected an integer from 1 to 2147483647 (tokens), got 0`},
		{"connectors is a boolean", "[mcp_servers.s]\ncommand = \"x\"\nconnectors = \"yes\"", `mcp_servers.s.connectors: expected a boolean`},
		{"a tool table without the tools level says where it goes", "[apps.github.create_issue]\napproval_mode = \"prompt\"", `c.toml:1:14: apps.github: unknown key "create_issue"; to configure the tool "create_issue", write [apps.github.tools.create_issue]`},
		{"a server tool table without the tools level says where it goes", "[mcp_servers.fs]\ncommand = \"x\"\n[mcp_servers.fs.\"read file\"]\napproval_mode = \"approve\"", `c.toml:3:17: mcp_servers.fs: unknown key "read file"; to configure the tool "read file", write [mcp_servers.fs.tools."read file"]`},
		{"a server's unknown key gets a suggestion", "[mcp_servers.s]\ncomand = \"x\"", `c.toml:2:1: mcp_servers.s: unknown key "comand" (did you mean "command"?)`},
		{"a clipped key gets a suggestion", "[mcp_servers.s]\nurl = \"http://x\"\nbearer_token_env = \"T\"", `mcp_servers.s: unknown key "bearer_token_env" (did you mean "bearer_token_env_var"?)`},
		{"approval_policy must be a string or table", "approval_policy = true", `c.toml:1:1: approval_policy: expected a string ("untrusted", "on-failure", "on-request" or "never") or a { granular = { ... } } table, got boolean true`},
		{"approval_policy granular needs its settings", `approval_policy = "granular"`, `approval_policy: "granular" takes settings`},
		{"approval_policy table needs granular", "approval_policy = {}", `approval_policy: empty table`},
		{"approval_policy table keys are checked", "approval_policy = { granulr = {} }", `approval_policy: unknown key "granulr" (did you mean "granular"?)`},
		{"granular values are booleans", "approval_policy = { granular = { sandbox_approval = 1, rules = true, mcp_elicitations = true } }", `approval_policy.granular.sandbox_approval: expected a boolean`},
		{"policies must be tables", "policies.p = \"trifecta\"", `policies.p: expected a table, got string "trifecta"`},
		{"policy globs are strings", "[policies.p]\nbuiltin = \"b\"\napps = \"*\"", `policies.p.apps: expected an array of strings, got string "*"`},
		{"policy config is a table", "[policies.p]\nbuiltin = \"b\"\nconfig = \"x\"", `policies.p.config: expected a table, got string "x"`},
		{"policy limits are positive", "[policies.p]\nbuiltin = \"b\"\ntimeout_ms = -5", `policies.p.timeout_ms: expected an integer from 1 to 2147483647 (milliseconds), got -5`},
		{"policy limits are integers", "[policies.p]\nbuiltin = \"b\"\nmax_output_kb = 1.5", `policies.p.max_output_kb: expected a positive integer (KiB), got float 1.5`},
		{"can_approve is a boolean", "[policies.p]\nbuiltin = \"b\"\ncan_approve = \"true\"", `policies.p.can_approve: expected a boolean`},
		{"wasm is a non-empty path", "[policies.p]\nwasm = \"\"", `policies.p.wasm: empty path`},
		{"profile is a string", "profile = 1", `c.toml:1:1: profile: expected a string, got integer 1`},
		{"a datetime is named as such", "[apps.x]\nenabled = 2026-01-01", `apps.x.enabled: expected a boolean (true or false), got datetime`},
		{"a long string is shortened", "[apps.x]\nenabled = \"" + strings.Repeat("é", 50) + "\"", `got string "` + strings.Repeat("é", 37) + `..."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, tt.src); !strings.Contains(got, tt.want) {
				t.Errorf("error:\n%s\nwant it to contain:\n%s", got, tt.want)
			}
		})
	}
}

func TestEveryValidValueLoads(t *testing.T) {
	t.Parallel()
	for _, m := range approvalModes {
		if got := loadOK(t, "[apps.x]\ndefault_tools_approval_mode = \""+m+"\"").Apps["x"].DefaultToolsApprovalMode; string(got) != m {
			t.Errorf("mode %s read as %q", m, got)
		}
	}
	for _, tr := range trustLevels {
		if got := loadOK(t, "[apps._default]\ntrust = \""+tr+"\"").Default.Trust; got != tr {
			t.Errorf("trust %s read as %q", tr, got)
		}
	}
	for _, ap := range approvalPolicies {
		if got := loadOK(t, "approval_policy = \""+ap+"\"").ApprovalPolicy.Value; got != ap {
			t.Errorf("approval_policy %s read as %q", ap, got)
		}
	}
	for _, v := range onErrorVerdicts {
		if got := loadOK(t, "[policies.p]\nbuiltin = \"b\"\non_error = \""+v+"\"").Policies[0].OnError; got != v {
			t.Errorf("on_error %s read as %q", v, got)
		}
	}
	for _, name := range hintNames() {
		h, _ := hints.Lookup(name)
		set := loadOK(t, "[apps.x]\nhints = { "+name+" = false }").Apps["x"].Hints
		if set.Get(h) != hints.False {
			t.Errorf("hint %s not set: %v", name, set.String())
		}
	}
}

func TestGranularApprovalPolicyLoadsInBothSpellings(t *testing.T) {
	t.Parallel()
	inline := loadOK(t, "approval_policy = { granular = { sandbox_approval = false, rules = true, mcp_elicitations = false } }")
	table := loadOK(t, "[approval_policy.granular]\nsandbox_approval = false\nrules = true\nmcp_elicitations = false\n")
	want := Granular{Rules: true}
	for _, cfg := range []*Config{inline, table} {
		if cfg.ApprovalPolicy.Value != "granular" || *cfg.ApprovalPolicy.Granular != want {
			t.Errorf("approval_policy = %+v %+v", cfg.ApprovalPolicy, cfg.ApprovalPolicy.Granular)
		}
	}
}

func TestStartupTimeoutSecWinsOverTheLegacyMs(t *testing.T) {
	t.Parallel()
	s := loadOK(t, "[mcp_servers.s]\ncommand = \"x\"\nstartup_timeout_ms = 5000\nstartup_timeout_sec = 7").Servers["s"]
	if s.StartupTimeout() != 7*time.Second {
		t.Errorf("startup timeout = %v, want 7s", s.StartupTimeout())
	}
}

func TestEnabledToolsEmptyMeansNoToolNotEveryTool(t *testing.T) {
	t.Parallel()
	s := loadOK(t, "[mcp_servers.s]\ncommand = \"x\"\nenabled_tools = []").Servers["s"]
	if s.EnabledTools == nil || len(s.EnabledTools) != 0 {
		t.Errorf("enabled_tools = %#v, want empty and non-nil", s.EnabledTools)
	}
}

func TestTheActiveProfileSuppliesApprovalPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want, at string
	}{
		{"a profile's approval_policy replaces the top-level one",
			"profile = \"ci\"\napproval_policy = \"on-request\"\n[profiles.ci]\napproval_policy = \"never\"\n", "never", "c.toml:4:1"},
		{"a profile without approval_policy keeps the top-level one",
			"profile = \"ci\"\napproval_policy = \"untrusted\"\n[profiles.ci]\nmodel = \"o3\"\n", "untrusted", "c.toml:2:1"},
		{"profiles that are not active are ignored",
			"[profiles.ci]\napproval_policy = \"never\"\n", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := loadOK(t, tt.src)
			if cfg.ApprovalPolicy.Value != tt.want || tt.at != "" && cfg.ApprovalPolicy.Pos.String() != tt.at {
				t.Errorf("approval_policy = %+v, want %q at %s", cfg.ApprovalPolicy, tt.want, tt.at)
			}
		})
	}
	got := loadErr(t, "profile = \"ci\"\n[profiles.ci]\napproval_policy = \"sometimes\"\n")
	if !strings.Contains(got, `c.toml:3:1: profiles.ci.approval_policy: unknown approval policy "sometimes"`) {
		t.Errorf("a bad profile approval_policy must be reported where it is written:\n%s", got)
	}
}

func TestUnknownTopLevelKeysAreCodexsAndIgnored(t *testing.T) {
	t.Parallel()
	loadOK(t, "modle = \"typo is not ours to judge\"\n[tui]\nanything = 1\n[plugins.\"p\".mcp_servers.s]\nbogus = true\n")
}

func TestKeysWithOddNamesAreQuotedInDiagnostics(t *testing.T) {
	t.Parallel()
	got := loadErr(t, "[apps.\"my.app\".tools.\"Delete File\"]\napproval_mode = \"never\"\n")
	want := `c.toml:2:1: apps."my.app".tools."Delete File".approval_mode: unknown approval mode "never"; want "auto", "prompt", "writes" or "approve"`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestAMissingFileIsReportedByName(t *testing.T) {
	t.Parallel()
	_, err := Load("testdata/does-not-exist.toml")
	if err == nil || err.Error() != "testdata/does-not-exist.toml: cannot read config file: no such file or directory" {
		t.Errorf("err = %v", err)
	}
}

func TestLoadErrorListsErrorsBeforeWarnings(t *testing.T) {
	t.Parallel()
	_, err := LoadBytes("c.toml", []byte("[apps._default]\nenabled = false\n[apps.a]\n[apps.b]\nenabled = \"x\"\n"))
	le := err.(*LoadError)
	if len(le.Diagnostics) != 2 || le.Diagnostics[0].Severity != SeverityError || le.Diagnostics[1].Severity != SeverityWarning {
		t.Fatalf("diagnostics = %v", le.Diagnostics)
	}
	if len(le.Errors()) != 1 {
		t.Errorf("Errors() = %v", le.Errors())
	}
	if !strings.HasPrefix(strings.Split(le.Error(), "\n")[1], "warning: c.toml:3:7: apps.a: ") {
		t.Errorf("Error() =\n%s", le.Error())
	}
}

func TestSyntaxErrorsAreReportedWhereTheyAre(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
	}{
		{"an unterminated string", "a = \"open\nb = 1\n", `c.toml:1:10: invalid TOML: strings cannot contain newlines`},
		{"a byte order mark is not a column", "\xef\xbb\xbfa = = 1\n", `c.toml:1:5: invalid TOML: expected value but found '=' instead`},
		{"a duplicate key inside an inline table", "x = 1\n[a]\nb = { c = 1, c = 2 }\n", `c.toml:3:14: invalid TOML: Key 'a.b.c' has already been defined.`},
		{"an unclosed header points at the end of its line", "[apps.github\n", `c.toml:1:13: invalid TOML: expected '.' or ']' to end table name, but got '\n' instead`},
		{"UTF-16 is refused at the start", "\xff\xfea\x00", `c.toml:1:2: invalid TOML: files cannot contain NULL bytes; probably using UTF-16; TOML files must be UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := loadErr(t, tt.src); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
