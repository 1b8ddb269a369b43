package main

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/hook"
)

// init rewrites the files `toolwarden tools sync` reads: an agent told to
// keep its config elsewhere (CLAUDE_CONFIG_DIR, CODEX_HOME) gets its
// servers wrapped there, and a stale file where the default would be is
// left alone, since the agent does not read it.
func TestInitRewritesTheFilesTheAgentAndToolsSyncRead(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, variable, file, decoy, format string
	}{
		{"Claude Code with CLAUDE_CONFIG_DIR", "CLAUDE_CONFIG_DIR", ".claude.json", ".claude.json", "json"},
		{"Codex with CODEX_HOME", "CODEX_HOME", "config.toml", ".codex/config.toml", "toml"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newInitHome(t)
			dir := filepath.Join(h.home, "elsewhere")
			src := `{"mcpServers": {"mem": {"command": "mcp-server-memory"}}}`
			if c.format == "toml" {
				src = "[mcp_servers.mem]\ncommand = \"mcp-server-memory\"\n"
			}
			used := h.write(filepath.Join("elsewhere", c.file), src)
			decoy := h.write(c.decoy, src)

			vars := map[string]string{"HOME": h.home, c.variable: dir}
			places := hook.Places{Home: h.home, Project: h.project, Getenv: func(k string) string { return vars[k] }}
			var got []string
			for _, l := range agentLocations(places) {
				got = append(got, l.path)
			}
			var want []string
			for _, a := range []hook.Agent{hook.Claude, hook.Codex, hook.Gemini} {
				want = append(want, places.ConfigFiles(a)...)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("init reads %q; tools sync reads %q", got, want)
			}

			var out, errb bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
			if code := run(e, []string{"init", "--project", h.project, "--write-agents"}); code != exitOK {
				t.Fatalf("init: exit %d\n%s%s", code, out.String(), errb.String())
			}
			if !strings.Contains(h.read(used), "wrap") {
				t.Errorf("%s was not rewritten:\n%s\n%s", used, h.read(used), out.String())
			}
			if h.read(decoy) != src {
				t.Errorf("%s, which the agent does not read, was rewritten:\n%s", decoy, h.read(decoy))
			}
		})
	}
}
