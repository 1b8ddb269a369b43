package config

import (
	"strings"
	"testing"
)

func TestValidateWarnsAboutRealTraps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []string // one per expected warning, in order
	}{
		{
			name: "an app table without enabled re-enables the app when _default is off",
			src:  "[apps._default]\nenabled = false\n\n[apps.github]\ndestructive_enabled = false\n",
			want: []string{`c.toml:4:7: apps.github: app "github" is enabled even though apps._default.enabled = false, because an [apps.github] table without "enabled" means enabled = true (as in Codex); add enabled = false to keep it off, or enabled = true to say it is meant`},
		},
		{
			name: "a tool table alone also creates the app table",
			src:  "[apps._default]\nenabled = false\n[apps.github.tools.search]\napproval_mode = \"approve\"\n",
			want: []string{`c.toml:3:7: apps.github: app "github" is enabled even though`},
		},
		{
			name: "an explicit enabled is no trap",
			src:  "[apps._default]\nenabled = false\n[apps.a]\nenabled = true\n[apps.b]\nenabled = false\n",
		},
		{
			name: "apps are fine while _default is on",
			src:  "[apps._default]\nenabled = true\n[apps.github]\ndestructive_enabled = false\n",
		},
		{
			name: "a tool in enabled_tools and disabled_tools",
			src:  "[mcp_servers.fs]\ncommand = \"npx\"\nenabled_tools = [\"read\", \"write\", \"move\"]\ndisabled_tools = [\"write\", \"move\", \"write\"]\n",
			want: []string{`c.toml:4:1: mcp_servers.fs.disabled_tools: "write", "move" are in both enabled_tools and disabled_tools; disabled_tools wins, so the tool is hidden: remove it from one list`},
		},
		{
			name: "an approve in an app named after a custom server cannot loosen it",
			src:  "[apps.fs]\ndefault_tools_approval_mode = \"approve\"\n[apps.fs.tools.write_file]\napproval_mode = \"approve\"\n[mcp_servers.fs]\ncommand = \"npx\"\n",
			want: []string{
				`c.toml:2:1: apps.fs.default_tools_approval_mode: Codex reads approval modes of server "fs" only from [mcp_servers.fs], and toolwarden never lets this approve lift an ask made there; write default_tools_approval_mode = "approve" in [mcp_servers.fs] to approve its tools`,
				`c.toml:4:1: apps.fs.tools.write_file.approval_mode: Codex reads approval modes of server "fs" only from [mcp_servers.fs], and toolwarden never lets this approve lift an ask made there; write it in [mcp_servers.fs.tools.write_file]`,
			},
		},
		{
			name: "an approve in a connector app or a stricter mode is no trap",
			src:  "[apps.fs]\ndefault_tools_approval_mode = \"prompt\"\n[apps.calendar]\ndefault_tools_approval_mode = \"approve\"\n[mcp_servers.fs]\ncommand = \"npx\"\n",
		},
		{
			name: "on-failure is deprecated",
			src:  "approval_policy = \"on-failure\"\n",
			want: []string{`c.toml:1:1: approval_policy: "on-failure" is deprecated in Codex and acts as "on-request" for MCP tool calls; write "on-request"`},
		},
		{
			name: "on-failure from the active profile is reported there",
			src:  "profile = \"p\"\n[profiles.p]\napproval_policy = \"on-failure\"\n",
			want: []string{`c.toml:3:1: profiles.p.approval_policy: "on-failure" is deprecated`},
		},
		{
			name: "a read-only and destructive override counts as destructive",
			src:  "[apps.x]\nhints = { readOnlyHint = true, destructiveHint = true }\n[apps.x.tools.t]\nhints = { readOnlyHint = true, destructiveHint = false }\n",
			want: []string{`c.toml:2:1: apps.x.hints: readOnlyHint = true and destructiveHint = true together count as destructive, not read-only; drop the one you do not mean`},
		},
		{
			name: "an app named like _default is probably a typo",
			src:  "[apps.default]\nenabled = false\n[apps._defualt]\nenabled = false\n",
			want: []string{
				`c.toml:1:7: apps.default: [apps.default] configures an app named "default", not the defaults for every app; did you mean [apps._default]?`,
				`c.toml:3:7: apps._defualt: [apps._defualt] configures an app named "_defualt"`,
			},
		},
		{
			name: "an app named default is fine when a server has that name",
			src:  "[apps.default]\nenabled = false\n[mcp_servers.default]\ncommand = \"x\"\n",
		},
		{
			name: "a server name Codex refuses",
			src:  "[mcp_servers.\"my.server\"]\ncommand = \"x\"\n",
			want: []string{`c.toml:1:14: mcp_servers."my.server": server name "my.server" has characters other than letters, digits, '_' and '-'`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := loadOK(t, tt.src)
			if len(cfg.Warnings) != len(tt.want) {
				t.Fatalf("warnings = %v, want %d", cfg.Warnings, len(tt.want))
			}
			for i, w := range cfg.Warnings {
				if w.Severity != SeverityWarning || !strings.HasPrefix(w.Error(), tt.want[i]) {
					t.Errorf("warning %d:\n%s\nwant prefix\n%s", i, w.Error(), tt.want[i])
				}
			}
		})
	}
}

func TestValidateWorksOnAHandBuiltConfig(t *testing.T) {
	t.Parallel()
	f := false
	cfg := &Config{
		Default: AppDefault{Enabled: &f},
		Apps:    map[string]*App{"x": {ID: "x", Pos: Position{File: "mine.toml", Line: 3, Col: 1}}},
	}
	ws := Validate(cfg)
	if len(ws) != 1 || !strings.HasPrefix(ws[0].String(), "warning: mine.toml:3:1: apps.x: ") {
		t.Errorf("warnings = %v", ws)
	}
}
