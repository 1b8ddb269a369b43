package hook_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/hook"
)

// resolveCase is one layout of an agent's files and the server it runs
// as "fs" there ({P} is the project, {R} its parent, {D} the temp folder):
// want is the last argument of the server's command (each
// file gives its own), "" when none runs.
type resolveCase struct {
	name    string
	files   map[string]string // path under the temp folder ({P} is the project) -> content
	env     map[string]string
	outcome hook.Outcome
	want    string
	why     string // a part of Resolution.Why
	as      string // the name resolved, "fs" when empty
}

func runResolveCases(t *testing.T, agent hook.Agent, cases []resolveCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			home, project := filepath.Join(dir, "home"), filepath.Join(dir, "work", "project")
			if err := os.MkdirAll(project, 0o700); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"HOME": home, "GEMINI_CLI_SYSTEM_SETTINGS_PATH": filepath.Join(dir, "etc", "settings.json")}
			for k, v := range c.env {
				env[k] = strings.ReplaceAll(v, "{D}", dir)
			}
			for path, content := range c.files {
				full := filepath.Join(dir, strings.ReplaceAll(path, "{P}", "work/project"))
				if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
					t.Fatal(err)
				}
				content = strings.NewReplacer("{P}", project, "{R}", filepath.Dir(project)).Replace(content)
				if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p := hook.Places{Home: home, Project: project, Getenv: func(k string) string { return env[k] }}
			name := c.as
			if name == "" {
				name = "fs"
			}
			r := p.Resolve(agent, name)
			got := ""
			if r.Outcome == hook.Runs {
				args := r.Server.Spec.Args
				got = args[len(args)-1]
			}
			if r.Outcome != c.outcome || got != c.want || !strings.Contains(r.Why, c.why) {
				t.Fatalf("Resolve = outcome %d, server %q, why %q; want outcome %d, server %q, why containing %q", r.Outcome, got, r.Why, c.outcome, c.want, c.why)
			}
		})
	}
}

// server is a stdio entry whose last argument says which file it came from.
func server(from string) string { return `{"command":"npx","args":["-y","fs-server","` + from + `"]}` }

func TestClaudeCodeRunsLocalThenApprovedProjectThenUserServers(t *testing.T) {
	t.Parallel()
	user := `{"mcpServers":{"fs":` + server("user") + `},"projects":{"{P}":{%s}}}`
	claudeJSON := func(project string) string { return strings.Replace(user, "%s", project, 1) }
	mcpJSON := `{"mcpServers":{"fs":` + server("mcp.json") + `}}`
	cli := map[string]string{"CLAUDE_CODE_ENTRYPOINT": "cli"}
	runResolveCases(t, hook.Claude, []resolveCase{
		{name: "local scope wins over an approved project server and the user's",
			files: map[string]string{"home/.claude.json": claudeJSON(`"mcpServers":{"fs":` + server("local") + `},"enabledMcpjsonServers":["fs"]`), "{P}/.mcp.json": mcpJSON},
			env:   cli, outcome: hook.Runs, want: "local"},
		{name: "an approved .mcp.json server wins over the user's",
			files: map[string]string{"home/.claude.json": claudeJSON(``), "{P}/.mcp.json": mcpJSON, "{P}/.claude/settings.local.json": `{"enabledMcpjsonServers":["fs"]}`},
			env:   cli, outcome: hook.Runs, want: "mcp.json"},
		{name: "enableAllProjectMcpServers in the user's settings approves it",
			files: map[string]string{"home/.claude.json": claudeJSON(``), "{P}/.mcp.json": mcpJSON, "home/.claude/settings.json": `{"enableAllProjectMcpServers":true}`},
			env:   cli, outcome: hook.Runs, want: "mcp.json"},
		{name: "an interactive session runs the user's server when the .mcp.json one is not approved",
			files: map[string]string{"home/.claude.json": claudeJSON(``), "{P}/.mcp.json": mcpJSON},
			env:   cli, outcome: hook.Runs, want: "user"},
		{name: "an unapproved .mcp.json server alone is not run in an interactive session",
			files: map[string]string{"{P}/.mcp.json": mcpJSON},
			env:   cli, outcome: hook.NotRun, why: "has not been approved"},
		{name: "claude -p runs the unapproved .mcp.json server",
			files: map[string]string{"home/.claude.json": claudeJSON(``), "{P}/.mcp.json": mcpJSON},
			env:   map[string]string{"CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}, outcome: hook.Runs, want: "mcp.json"},
		{name: "a session whose mode is unknown is unsure between two different servers",
			files:   map[string]string{"home/.claude.json": claudeJSON(``), "{P}/.mcp.json": mcpJSON},
			outcome: hook.Unsure, why: "interactive or -p"},
		{name: "skipDangerousModePermissionPrompt makes an interactive session unsure",
			files: map[string]string{"home/.claude.json": claudeJSON(``), "{P}/.mcp.json": mcpJSON, "home/.claude/settings.json": `{"skipDangerousModePermissionPrompt":true}`},
			env:   cli, outcome: hook.Unsure, why: "interactive or -p"},
		{name: "a rejected .mcp.json server leaves the user's",
			files: map[string]string{"home/.claude.json": claudeJSON(`"enableAllProjectMcpServers":true`), "{P}/.mcp.json": mcpJSON, "{P}/.claude/settings.local.json": `{"disabledMcpjsonServers":["fs"]}`},
			env:   map[string]string{"CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}, outcome: hook.Runs, want: "user"},
		{name: "the repository's own .claude/settings.json does not approve before the trust dialog",
			files: map[string]string{"{P}/.mcp.json": mcpJSON, "{P}/.claude/settings.json": `{"enabledMcpjsonServers":["fs"]}`},
			env:   cli, outcome: hook.NotRun, why: "has not been approved"},
		{name: "the repository's own .claude/settings.json approves once the trust dialog was accepted",
			files: map[string]string{"home/.claude.json": `{"projects":{"{P}":{"hasTrustDialogAccepted":true}}}`, "{P}/.mcp.json": mcpJSON, "{P}/.claude/settings.json": `{"enabledMcpjsonServers":["fs"]}`},
			env:   cli, outcome: hook.Runs, want: "mcp.json"},
		{name: "a settings.local.json in a .claude folder holding .git approves nothing",
			files: map[string]string{"{P}/.mcp.json": mcpJSON, "{P}/.claude/.git": ``, "{P}/.claude/settings.local.json": `{"enabledMcpjsonServers":["fs"]}`},
			env:   cli, outcome: hook.NotRun, why: "has not been approved"},
		{name: "an approval in the older per-project record counts",
			files: map[string]string{"home/.claude.json": claudeJSON(`"enabledMcpjsonServers":["fs"]`), "{P}/.mcp.json": mcpJSON},
			env:   cli, outcome: hook.Runs, want: "mcp.json"},
		{name: "another project's approval does not count",
			files: map[string]string{"home/.claude.json": `{"projects":{"{P}-other":{"enabledMcpjsonServers":["fs"]}}}`, "{P}/.mcp.json": mcpJSON},
			env:   cli, outcome: hook.NotRun, why: "has not been approved"},
		{name: "a parent folder's .mcp.json counts, below the project's own",
			files: map[string]string{"work/.mcp.json": `{"mcpServers":{"fs":` + server("parent") + `}}`, "{P}/.claude/settings.local.json": `{"enabledMcpjsonServers":["fs"]}`},
			env:   cli, outcome: hook.Runs, want: "parent"},
		{name: "the project's .mcp.json wins over a parent folder's",
			files: map[string]string{"work/.mcp.json": `{"mcpServers":{"fs":` + server("parent") + `}}`, "{P}/.mcp.json": mcpJSON, "{P}/.claude/settings.local.json": `{"enabledMcpjsonServers":["fs"]}`},
			env:   cli, outcome: hook.Runs, want: "mcp.json"},
		{name: "an unapproved .mcp.json in a parent folder is not run",
			files: map[string]string{"work/.mcp.json": `{"mcpServers":{"fs":` + server("parent") + `}}`},
			env:   cli, outcome: hook.NotRun, why: "has not been approved"},
		{name: "a server disabled for the project in /mcp is not run",
			files: map[string]string{"home/.claude.json": claudeJSON(`"disabledMcpServers":["fs"]`)},
			env:   cli, outcome: hook.NotRun, why: "disabledMcpServers"},
		{name: "names compare as Claude Code's tool names carry them",
			files: map[string]string{"home/.claude.json": `{"mcpServers":{"f.s":` + server("user") + `}}`},
			env:   cli, as: "f_s", outcome: hook.Runs, want: "user"},
		{name: "two names one tool name fits leave the answer unsure",
			files: map[string]string{"home/.claude.json": `{"mcpServers":{"f.s":` + server("user") + `,"f s":` + server("user2") + `}}`},
			env:   cli, as: "f_s", outcome: hook.Unsure, why: "do not tell apart"},
		{name: "a server in no file is not configured",
			files: map[string]string{"home/.claude.json": `{}`}, env: cli, outcome: hook.NotConfigured, why: "not in claude's MCP config"},
		{name: "a ~/.claude.json that is not JSON leaves the answer unsure",
			files: map[string]string{"home/.claude.json": `{"mcpServers":`}, env: cli, outcome: hook.Unsure, why: "could not be read"},
	})
}

func TestGeminiCLIRunsTheLastDefinitionOfTheFilesItLoads(t *testing.T) {
	t.Parallel()
	trust := `{"{P}":"TRUST_FOLDER"}`
	runResolveCases(t, hook.Gemini, []resolveCase{
		{name: "a trusted project's settings win over the user's",
			files:   map[string]string{"home/.gemini/settings.json": `{"mcpServers":{"fs":` + server("user") + `}}`, "{P}/.gemini/settings.json": `{"mcpServers":{"fs":` + server("project") + `}}`, "home/.gemini/trustedFolders.json": trust},
			outcome: hook.Runs, want: "project"},
		{name: "an untrusted project's settings are not loaded",
			files:   map[string]string{"home/.gemini/settings.json": `{"mcpServers":{"fs":` + server("user") + `}}`, "{P}/.gemini/settings.json": `{"mcpServers":{"fs":` + server("project") + `}}`},
			outcome: hook.Runs, want: "user"},
		{name: "a server only in an untrusted project's settings is not run",
			files:   map[string]string{"{P}/.gemini/settings.json": `{"mcpServers":{"fs":` + server("project") + `}}`},
			outcome: hook.NotRun, why: "not trusted"},
		{name: "the longest trust rule decides: a distrusted project below a trusted parent",
			files:   map[string]string{"{P}/.gemini/settings.json": `{"mcpServers":{"fs":` + server("project") + `}}`, "home/.gemini/trustedFolders.json": `{"{P}":"DO_NOT_TRUST","{R}":"TRUST_FOLDER"}`},
			outcome: hook.NotRun, why: "not trusted"},
		{name: "the longest trust rule decides: a trusted project below a distrusted parent",
			files:   map[string]string{"{P}/.gemini/settings.json": `{"mcpServers":{"fs":` + server("project") + `}}`, "home/.gemini/trustedFolders.json": `{"{R}":"DO_NOT_TRUST","{P}":"TRUST_FOLDER"}`},
			outcome: hook.Runs, want: "project"},
		{name: "GEMINI_CLI_TRUST_WORKSPACE=true trusts the folder",
			files:   map[string]string{"{P}/.gemini/settings.json": `{"mcpServers":{"fs":` + server("project") + `}}`},
			env:     map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"},
			outcome: hook.Runs, want: "project"},
		{name: "with folder trust turned off every folder is trusted",
			files:   map[string]string{"home/.gemini/settings.json": `{"security":{"folderTrust":{"enabled":false}}}`, "{P}/.gemini/settings.json": `{"mcpServers":{"fs":` + server("project") + `}}`},
			outcome: hook.Runs, want: "project"},
		{name: "the system settings win over the project's",
			files:   map[string]string{"etc/settings.json": `{"mcpServers":{"fs":` + server("system") + `}}`, "{P}/.gemini/settings.json": `{"mcpServers":{"fs":` + server("project") + `}}`, "home/.gemini/trustedFolders.json": trust},
			outcome: hook.Runs, want: "system"},
		{name: "the user's settings win over the system defaults",
			files:   map[string]string{"etc/system-defaults.json": `{"mcpServers":{"fs":` + server("defaults") + `}}`, "home/.gemini/settings.json": `{"mcpServers":{"fs":` + server("user") + `}}`},
			outcome: hook.Runs, want: "user"},
		{name: "a server in mcp.excluded is not run",
			files:   map[string]string{"home/.gemini/settings.json": `{"mcpServers":{"fs":` + server("user") + `},"mcp":{"excluded":["fs"]}}`},
			outcome: hook.NotRun, why: "mcp.excluded"},
		{name: "a server outside mcp.allowed is not run",
			files:   map[string]string{"home/.gemini/settings.json": `{"mcpServers":{"fs":` + server("user") + `},"mcp":{"allowed":["github"]}}`},
			outcome: hook.NotRun, why: "mcp.allowed"},
		{name: "GEMINI_CLI_HOME moves the user's files",
			files:   map[string]string{"other/.gemini/settings.json": `{"mcpServers":{"fs":` + server("gemini-home") + `}}`},
			env:     map[string]string{"GEMINI_CLI_HOME": "{D}/other"},
			outcome: hook.Runs, want: "gemini-home"},
	})
}

func TestCodexMergesItsConfigLayersAsCodexDoes(t *testing.T) {
	t.Parallel()
	user := "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"fs-server\", \"user\"]\n"
	trusted := "[projects.\"{P}\"]\ntrust_level = \"trusted\"\n"
	runResolveCases(t, hook.Codex, []resolveCase{
		{name: "the user's config.toml",
			files: map[string]string{"home/.codex/config.toml": user}, outcome: hook.Runs, want: "user"},
		{name: "a trusted project's .codex/config.toml wins over the user's",
			files:   map[string]string{"home/.codex/config.toml": user + trusted, "{P}/.codex/config.toml": "[mcp_servers.fs]\nargs = [\"-y\", \"fs-server\", \"project\"]\n"},
			outcome: hook.Runs, want: "project"},
		{name: "an untrusted project's .codex/config.toml is not loaded",
			files:   map[string]string{"home/.codex/config.toml": user, "{P}/.codex/config.toml": "[mcp_servers.fs]\nargs = [\"-y\", \"fs-server\", \"project\"]\n"},
			outcome: hook.Runs, want: "user"},
		{name: "a server only in an untrusted project is not run",
			files:   map[string]string{"home/.codex/config.toml": "", "{P}/.codex/config.toml": "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"project\"]\n"},
			outcome: hook.NotRun, why: "not trusted"},
		{name: "the project root's trust covers a folder below it",
			files:   map[string]string{"home/.codex/config.toml": user + "[projects.\"{R}\"]\ntrust_level = \"trusted\"\n", "work/.git/HEAD": "", "{P}/.codex/config.toml": "[mcp_servers.fs]\nargs = [\"-y\", \"fs-server\", \"project\"]\n"},
			outcome: hook.Runs, want: "project"},
		{name: "a folder nearer the project wins over the root's",
			files: map[string]string{"home/.codex/config.toml": user + "[projects.\"{R}\"]\ntrust_level = \"trusted\"\n", "work/.git/HEAD": "",
				"work/.codex/config.toml": "[mcp_servers.fs]\nargs = [\"-y\", \"fs-server\", \"root\"]\n", "{P}/.codex/config.toml": "[mcp_servers.fs]\nargs = [\"-y\", \"fs-server\", \"project\"]\n"},
			outcome: hook.Runs, want: "project"},
		{name: "a server turned off is not run",
			files:   map[string]string{"home/.codex/config.toml": user + "enabled = false\n"},
			outcome: hook.NotRun, why: "enabled = false"},
		{name: "CODEX_HOME moves the user's config",
			files:   map[string]string{"codex/config.toml": strings.Replace(user, "user", "codex-home", 1)},
			env:     map[string]string{"CODEX_HOME": "{D}/codex"},
			outcome: hook.Runs, want: "codex-home"},
		{name: "a config.toml that is not TOML leaves the answer unsure",
			files: map[string]string{"home/.codex/config.toml": "[mcp_servers.fs"}, outcome: hook.Unsure, why: "could not be read"},
	})
}
