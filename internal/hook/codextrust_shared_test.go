package hook_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/hook"
)

// A project folder's .codex/config.toml holding one hook and one MCP
// server, under a user config that records trust (extra: more of it).
func codexTrustLayout(t *testing.T, extra string, marker string) (p hook.Places, cfg string) {
	t.Helper()
	home, root := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, marker), 0o700); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(root, "sub")
	cfg = filepath.Join(project, ".codex", "config.toml")
	writeFile(t, cfg, "[[hooks.PreToolUse]]\nmatcher = \"^mcp__\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"toolwarden hook --agent codex\"\n\n[mcp_servers.s]\ncommand = \"node\"\nargs = [\"s.js\"]\n")
	writeFile(t, filepath.Join(home, ".codex", "config.toml"), fmt.Sprintf("%s\n[projects.%q]\ntrust_level = \"trusted\"\n", extra, root)+
		fmt.Sprintf("\n[projects.%q]\ntrust_level = %q\n", project, map[bool]string{true: "untrusted", false: "trusted"}[marker == ".git"]))
	return hook.Places{Home: home, Project: project, Getenv: func(string) string { return "" }}, cfg
}

// Codex's project trust has one answer in toolwarden: whether Codex loads
// a project's hooks (CodexHooks) and whether it runs the project's MCP
// servers (Resolve) agree, for a sub-folder the user marked untrusted
// inside a trusted repository, and for a root found by Codex's
// project_root_markers rather than by .git.
func TestCodexHooksAndServersAgreeOnWhetherCodexTrustsTheProject(t *testing.T) {
	for _, c := range []struct {
		name, extra, marker string
		trusted             bool
	}{
		{"a folder marked untrusted inside a trusted repository", "", ".git", false},
		{"a root found by project_root_markers", `project_root_markers = [".hg"]`, ".hg", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, cfg := codexTrustLayout(t, c.extra, c.marker)
			if c.marker == ".hg" {
				// Only the root, found by its marker, is recorded trusted.
				writeFile(t, filepath.Join(p.Home, ".codex", "config.toml"), fmt.Sprintf("%s\n[projects.%q]\ntrust_level = \"trusted\"\n", c.extra, filepath.Dir(p.Project)))
			}
			hooks, errs := p.CodexHooks()
			if len(errs) != 0 {
				t.Fatal(errs)
			}
			var found *hook.CodexHook
			for i := range hooks {
				if hooks[i].File == cfg {
					found = &hooks[i]
				}
			}
			if found == nil {
				t.Fatalf("the project's hook is not listed: %+v", hooks)
			}
			hookTrusted := found.ProjectUntrusted == ""
			runs := p.Resolve(hook.Codex, "s").Outcome == hook.Runs
			if hookTrusted != c.trusted || runs != c.trusted {
				t.Fatalf("want trusted=%v; the hook's project is trusted: %v (%s), the server runs: %v", c.trusted, hookTrusted, found.ProjectUntrusted, runs)
			}
		})
	}
}
