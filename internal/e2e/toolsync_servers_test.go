package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// `toolwarden tools sync` starts the servers the agents' configs name, to
// list their tools. The attacker here writes an agent's MCP config (a
// clone's project files, or the user's own) but not the admin's
// requirements: tools sync must start no server the hook would refuse,
// and none the agent itself would not run.

// syncRun is one `toolwarden tools sync` through the real binary, with a
// fresh home and project and the catalog in its own folder.
type syncRun struct {
	home, project, catalog string
	env                    []string
}

func newSyncRun(t *testing.T) *syncRun {
	t.Helper()
	dir := t.TempDir()
	r := &syncRun{home: filepath.Join(dir, "home"), project: filepath.Join(dir, "project"), catalog: filepath.Join(dir, "catalog")}
	for _, d := range []string{r.home, r.project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// write puts content at path (relative to dir), making its folders.
func (r *syncRun) write(t *testing.T, dir, path, content string) {
	t.Helper()
	p := filepath.Join(dir, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// sync runs tools sync for agent and returns its exit code and output.
func (r *syncRun) sync(t *testing.T, agent string) (int, string) {
	t.Helper()
	cmd := exec.Command(twBin, "tools", "sync", "--agent", agent, "--project", r.project, "--timeout", "60s")
	cmd.Env = append(append(os.Environ(), "HOME="+r.home, "TOOLWARDEN_CATALOG="+r.catalog, "CODEX_HOME="+filepath.Join(r.home, ".codex"),
		"GEMINI_CLI_SYSTEM_SETTINGS_PATH="+filepath.Join(r.home, "no-system-settings.json")), r.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return exitStatus(t, err), out.String()
}

// listed is what `toolwarden tools list` shows of the catalog.
func (r *syncRun) listed(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(twBin, "tools", "list")
	cmd.Env = append(os.Environ(), "TOOLWARDEN_CATALOG="+r.catalog)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tools list: %v\n%s", err, out)
	}
	return string(out)
}

// agentConfig is where each agent's user config lives, and one server in
// its syntax.
func agentConfig(agent string, servers map[string][2]string) (path, content string) {
	var b strings.Builder
	switch agent {
	case "codex":
		for name, s := range servers {
			b.WriteString("[mcp_servers." + name + "]\ncommand = " + jsonQuote(s[0]) + "\nargs = [" + jsonQuote(s[1]) + "]\n")
		}
		return ".codex/config.toml", b.String()
	}
	var entries []string
	for name, s := range servers {
		entries = append(entries, jsonQuote(name)+`: {"command": `+jsonQuote(s[0])+`, "args": [`+jsonQuote(s[1])+`]}`)
	}
	content = `{"mcpServers": {` + strings.Join(entries, ", ") + `}}`
	if agent == "gemini" {
		return ".gemini/settings.json", content
	}
	return ".claude.json", content
}

// Through the real binary, for each agent: under an admin's allow-list
// that admits only the filesystem server, tools sync lists that server and
// never starts the other one the user's config names (its code would leave
// a marker file); the output says it was refused, and by which
// requirements file. The same holds for the admitted command when the
// agent's config gives it a variable that loads code.
func TestToolsSyncStartsNoServerTheAdminsAllowListsRefuse(t *testing.T) {
	fs := npmServer(t, "mcp-server-filesystem")
	for _, agent := range []string{"claude", "gemini", "codex"} {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			r := newSyncRun(t)
			reqs := writeFile(t, "requirements.toml", "[[allowed_servers]]\ncommand = "+jsonQuote(fs)+"\n")
			r.env = []string{"TOOLWARDEN_REQUIREMENTS=" + reqs}
			evil, marker := evilScript(t)
			path, content := agentConfig(agent, map[string][2]string{"files": {fs, r.project}, "evil": {"node", evil}})
			r.write(t, r.home, path, content)
			code, out := r.sync(t, agent)
			neverRan(t, marker)
			if code != 0 {
				t.Fatalf("tools sync exited %d:\n%s", code, out)
			}
			mustContain(t, out, "refuse evil: not started")
			mustContain(t, out, reqs)
			mustContain(t, out, "ok   files:")
			list := r.listed(t)
			mustContain(t, list, "files:")
			if strings.Contains(list, "evil") {
				t.Fatalf("the refused server has a catalog entry:\n%s", list)
			}
		})
	}
	t.Run("an admitted command whose env loads code", func(t *testing.T) {
		t.Parallel()
		r := newSyncRun(t)
		reqs := writeFile(t, "requirements.toml", "[[allowed_servers]]\ncommand = "+jsonQuote(fs)+"\n")
		r.env = []string{"TOOLWARDEN_REQUIREMENTS=" + reqs}
		evil, marker := evilScript(t)
		r.write(t, r.home, ".claude.json", `{"mcpServers": {"files": {"command": `+jsonQuote(fs)+`, "args": [`+jsonQuote(r.project)+`], "env": {"NODE_OPTIONS": "--require `+evil+`"}}}}`)
		code, out := r.sync(t, "claude")
		neverRan(t, marker)
		mustContain(t, out, "refuse files: not started")
		mustContain(t, out, "NODE_OPTIONS")
		if code != 0 {
			t.Fatalf("tools sync exited %d:\n%s", code, out)
		}
	})
	t.Run("a Codex-style [mcp_servers] allow-list", func(t *testing.T) {
		t.Parallel()
		r := newSyncRun(t)
		reqs := writeFile(t, "requirements.toml", "[mcp_servers.files.identity]\ncommand = "+jsonQuote(fs)+"\n")
		r.env = []string{"TOOLWARDEN_REQUIREMENTS=" + reqs}
		evil, marker := evilScript(t)
		// Under an admitted name, and under a name the list does not hold.
		path, content := agentConfig("codex", map[string][2]string{"files": {"node", evil}, "evil": {"node", evil}})
		r.write(t, r.home, path, content)
		code, out := r.sync(t, "codex")
		neverRan(t, marker)
		mustContain(t, out, "refuse files: not started")
		mustContain(t, out, "refuse evil: not started")
		mustContain(t, out, reqs)
		if code != 0 {
			t.Fatalf("tools sync exited %d:\n%s", code, out)
		}
	})
	t.Run("requirements that cannot be read", func(t *testing.T) {
		t.Parallel()
		r := newSyncRun(t)
		r.env = []string{"TOOLWARDEN_REQUIREMENTS=" + writeFile(t, "requirements.toml", "[[allowed_servers]\n")}
		evil, marker := evilScript(t)
		path, content := agentConfig("claude", map[string][2]string{"evil": {"node", evil}})
		r.write(t, r.home, path, content)
		code, out := r.sync(t, "claude")
		neverRan(t, marker)
		if code != 1 {
			t.Fatalf("tools sync exited %d, want 1 (fail closed):\n%s", code, out)
		}
		mustContain(t, out, "no server started")
	})
}

// Through the real binary, for each agent: tools sync lists the server the
// agent runs from a layer beyond the user's own file (Claude Code: an
// approved .mcp.json of the project's parent folder; Gemini CLI: the
// system settings; Codex: the trusted project's .codex/config.toml), and
// never starts a server the user's file names but the agent will not run
// (disabled for the project, in mcp.excluded, enabled = false): its code
// would leave a marker file, and the catalog gets no entry for it.
func TestToolsSyncListsTheServersEachAgentRunsAndNoOther(t *testing.T) {
	fs := npmServer(t, "mcp-server-filesystem")
	for _, agent := range []string{"claude", "gemini", "codex"} {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			r := newSyncRun(t)
			evil, marker := evilScript(t)
			files := `{"command": ` + jsonQuote(fs) + `, "args": [` + jsonQuote(r.project) + `]}`
			gone := `{"command": "node", "args": [` + jsonQuote(evil) + `]}`
			switch agent {
			case "claude":
				r.write(t, filepath.Dir(r.project), ".mcp.json", `{"mcpServers": {"files": `+files+`}}`)
				r.write(t, r.home, ".claude.json", `{"mcpServers": {"gone": `+gone+`}, "projects": {`+jsonQuote(r.project)+
					`: {"enabledMcpjsonServers": ["files"], "hasTrustDialogAccepted": true, "disabledMcpServers": ["gone"]}}}`)
			case "gemini":
				r.write(t, r.home, "no-system-settings.json", `{"mcpServers": {"files": `+files+`}}`)
				r.write(t, r.home, ".gemini/settings.json", `{"mcpServers": {"gone": `+gone+`}, "mcp": {"excluded": ["gone"]}}`)
			case "codex":
				r.write(t, r.project, ".codex/config.toml", "[mcp_servers.files]\ncommand = "+jsonQuote(fs)+"\nargs = ["+jsonQuote(r.project)+"]\n")
				r.write(t, r.home, ".codex/config.toml", "[projects."+jsonQuote(r.project)+"]\ntrust_level = \"trusted\"\n\n[mcp_servers.gone]\ncommand = \"node\"\nargs = ["+jsonQuote(evil)+"]\nenabled = false\n")
			}
			code, out := r.sync(t, agent)
			neverRan(t, marker)
			if code != 0 {
				t.Fatalf("tools sync exited %d:\n%s", code, out)
			}
			mustContain(t, out, "ok   files:")
			mustContain(t, out, "skip gone: "+agent+" does not run it")
			list := r.listed(t)
			mustContain(t, list, "files:")
			if strings.Contains(list, "gone") {
				t.Fatalf("a server the agent does not run has a catalog entry:\n%s", list)
			}
		})
	}
}

// neverRan fails the test when the server's code left its marker: tools
// sync started a server it must not have.
func neverRan(t *testing.T, marker string) {
	t.Helper()
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("tools sync started a server it must not start: its code ran (%s exists: %v)", marker, err)
	}
}
