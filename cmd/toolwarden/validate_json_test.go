package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// An agent's JSON settings file given to --config is one error that says
// what the file is and what to pass instead, not a list of TOML syntax
// errors.
func TestValidateSaysAJSONFileIsAnAgentsSettingsNotAToolwardenConfig(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	claude := filepath.Join(home, ".claude.json")
	writeTestFile(t, claude, `{
  "numStartups": 3,
  "mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/src"]}},
  "projects": {"/work/a": {"allowedTools": [], "mcpServers": {}}}
}
`)
	gemini := filepath.Join(home, ".gemini", "settings.json")
	writeTestFile(t, gemini, "// comments, as Gemini CLI allows\n{ \"mcpServers\": {} }\n")
	list := filepath.Join(home, "servers.json")
	writeTestFile(t, list, `["a", "b"]`)
	for _, c := range []struct {
		name, file, whose string
	}{
		{"Claude Code's ~/.claude.json", claude, "Claude Code's JSON settings file"},
		{"Gemini CLI's settings.json with a comment first", gemini, "Gemini CLI's JSON settings file"},
		{"any JSON array", list, "an agent's JSON settings file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLIEnv(t, map[string]string{"HOME": home}, "", "validate", "--config", c.file)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			want := c.file + ":1:1: this is " + c.whose + ", not a toolwarden config (toolwarden reads TOML): give --config the file \"toolwarden init\" wrote ("
			if code != exitError || stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "~/.codex/config.toml") {
				t.Fatalf("exit %d, %d line(s)\n%s%s\nwant one line starting %q", code, len(lines), stdout, stderr, want)
			}
		})
	}
}

// A broken TOML file is not taken for JSON: it gets its syntax errors.
func TestValidateStillReportsTOMLErrorsForABrokenTOMLFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "config.toml")
	writeTestFile(t, p, "[apps.fs\ndestructive_enabled = false\n")
	code, _, stderr := runCLI(t, "", "validate", "--config", p)
	if code != exitError || !strings.Contains(stderr, p+":1:9: invalid TOML") || strings.Contains(stderr, "JSON") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}
