package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/catalog"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// npmBin is scripts/npm/node_modules/.bin, where scripts/setup.sh installs
// the MCP servers the tests start; the test is skipped without it (and
// fails in CI, where TOOLWARDEN_REQUIRE_TOOLCHAINS=1).
func npmBin(t *testing.T) string {
	t.Helper()
	return filepath.Dir(testkit.NPMBin(t, "mcp-server-filesystem"))
}

// syncFixture lays out testdata/tools-sync in a temporary folder: a home
// with Gemini CLI's and Codex's configs and a project with Claude Code's
// .mcp.json, naming real npm servers (server-filesystem, server-memory).
func syncFixture(t *testing.T) (env map[string]string, project string) {
	t.Helper()
	bin := npmBin(t)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/tools-sync")); err != nil {
		t.Fatal(err)
	}
	home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	codex, err := os.ReadFile(filepath.Join(dir, "codex-config.toml.in"))
	if err != nil {
		t.Fatal(err)
	}
	codex = []byte(strings.NewReplacer("NPM_BIN", bin, "PROJECT_DIR", project).Replace(string(codex)))
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), codex, 0o600); err != nil {
		t.Fatal(err)
	}
	// Claude Code was told to trust the project's fs server.
	claude := `{"projects": {"` + project + `": {"enabledMcpjsonServers": ["fs"], "hasTrustDialogAccepted": true}}}`
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(claude), 0o600); err != nil {
		t.Fatal(err)
	}
	env = map[string]string{"HOME": home, "NPM_BIN": bin, "PROJECT_DIR": project, "PATH": os.Getenv("PATH"), catalogEnv: filepath.Join(dir, "catalog")}
	return env, project
}

func TestToolsSyncListsEveryAgentsServersIntoTheCatalog(t *testing.T) {
	t.Parallel()
	env, project := syncFixture(t)
	code, out, stderr := runCLIEnv(t, env, "", "tools", "sync", "--project", project)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"ok   fs: 14 tools", "ok   memory: 9 tools", "ok   codex-fs: 14 tools", ".mcp.json (mcpServers.fs)", "settings.json (mcpServers.memory)", "config.toml (mcp_servers.codex-fs)"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	entries, errs := catalog.ReadAll(env[catalogEnv])
	if len(entries) != 3 || len(errs) != 0 {
		t.Fatalf("catalog: %v %v", entries, errs)
	}
	code, out, _ = runCLIEnv(t, env, "", "tools", "list")
	if code != exitOK || !strings.Contains(out, "fs: 14 tools, listed") {
		t.Fatalf("tools list: exit %d\n%s", code, out)
	}
	for _, want := range []string{"read_text_file               readOnlyHint=true openWorldHint=false", "delete_entities              readOnlyHint=false destructiveHint=true"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	// Only one agent's config when asked.
	code, out, _ = runCLIEnv(t, env, "", "tools", "sync", "--project", project, "--agent", "gemini")
	if code != exitOK || strings.Contains(out, "fs:") || !strings.Contains(out, "memory: 9 tools") {
		t.Fatalf("--agent gemini: exit %d\n%s", code, out)
	}
}

func TestToolsSyncSaysWhatFailedAndKeepsWhatWorked(t *testing.T) {
	t.Parallel()
	env, project := syncFixture(t)
	broken := filepath.Join(t.TempDir(), "broken.toml")
	if err := os.WriteFile(broken, []byte("[mcp_servers.gone]\ncommand = \"no-such-mcp-server-command\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLIEnv(t, env, "", "tools", "sync", "--project", project, "--agent", "claude", "--config", broken)
	if code != exitError {
		t.Fatalf("exit %d, want %d\n%s", code, exitError, out)
	}
	if !strings.Contains(out, "FAIL gone: ") || !strings.Contains(out, "no-such-mcp-server-command") || !strings.Contains(out, "ok   fs: 14 tools") {
		t.Fatalf("output:\n%s", out)
	}
	if !strings.Contains(stderr, "1 of 2 servers not listed") {
		t.Fatalf("stderr: %s", stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(env[catalogEnv], "fs@*.json")); len(m) != 1 {
		t.Fatal("the server that listed was not written:", m)
	}
}

func TestToolsListWarnsOfACorruptFileAndShowsTheRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{catalogEnv: dir}
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLIEnv(t, env, "", "tools", "list")
	if code != exitOK || !strings.Contains(out, "is empty") || !strings.Contains(stderr, "bad.json") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
}

func TestToolsUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"no subcommand is bad usage", []string{"tools"}, exitUsage},
		{"an unknown subcommand is bad usage", []string{"tools", "fetch"}, exitUsage},
		{"help exits 0", []string{"tools", "--help"}, exitOK},
		{"sync help exits 0", []string{"tools", "sync", "--help"}, exitOK},
		{"sync takes no arguments", []string{"tools", "sync", "fs"}, exitUsage},
		{"an unknown agent is bad usage", []string{"tools", "sync", "--agent", "cursor", "--catalog", "x"}, exitUsage},
	}
	for _, c := range cases {
		if code, _, _ := runCLIEnv(t, map[string]string{"HOME": t.TempDir()}, "", c.args...); code != c.code {
			t.Errorf("%s: exit %d, want %d", c.name, code, c.code)
		}
	}
}

// A clone's .mcp.json names the commands sync would run: a server Claude
// Code was not told to trust is not started (a file it would create stays
// absent) unless --trust-project says so.
func TestToolsSyncStartsNoProjectServerTheAgentDoesNotTrust(t *testing.T) {
	t.Parallel()
	env, project := syncFixture(t)
	marker := filepath.Join(t.TempDir(), "ran")
	mcp := `{"mcpServers": {"fs": {"command": "${NPM_BIN}/mcp-server-filesystem", "args": ["${PROJECT_DIR}"]},
		"evil": {"command": "sh", "args": ["-c", "touch ` + marker + `"]}}}`
	if err := os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(mcp), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLIEnv(t, env, "", "tools", "sync", "--project", project, "--agent", "claude")
	if code != exitOK || !strings.Contains(out, "skip evil: ") || !strings.Contains(out, "ok   fs: 14 tools") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("an untrusted project server was started")
	}
	code, out, _ = runCLIEnv(t, env, "", "tools", "sync", "--project", project, "--agent", "claude", "--trust-project", "--timeout", "5s")
	if _, err := os.Stat(marker); err != nil || code != exitError || !strings.Contains(out, "FAIL evil") {
		t.Fatalf("--trust-project did not start it: exit %d %v\n%s", code, err, out)
	}
}
