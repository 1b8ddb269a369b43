package hook_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/hook"
)

// BenchmarkResolve is what a hook pays per call to find the server its
// agent runs under a name (compare BenchmarkHookDefinition, the catalog
// read it precedes).
func BenchmarkResolve(b *testing.B) {
	dir := b.TempDir()
	home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	files := map[string]string{
		filepath.Join(home, ".claude.json"):                      `{"mcpServers":{"fs":` + server("user") + `},"projects":{"` + project + `":{"mcpServers":{"gh":` + server("local") + `}}}}`,
		filepath.Join(project, ".mcp.json"):                      `{"mcpServers":{"fs":` + server("mcp.json") + `}}`,
		filepath.Join(project, ".claude", "settings.local.json"): `{"enabledMcpjsonServers":["fs"]}`,
		filepath.Join(home, ".gemini", "settings.json"):          `{"mcpServers":{"fs":` + server("user") + `}}`,
		filepath.Join(home, ".codex", "config.toml"):             "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"user\"]\n",
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home, "CLAUDE_CODE_ENTRYPOINT": "cli"}
	p := hook.Places{Home: home, Project: project, Getenv: func(k string) string { return env[k] }, Environ: os.Environ()}
	for _, agent := range []hook.Agent{hook.Claude, hook.Gemini, hook.Codex} {
		b.Run(string(agent), func(b *testing.B) {
			for b.Loop() {
				if r := p.Resolve(agent, "fs"); r.Outcome != hook.Runs {
					b.Fatal(r.Why)
				}
			}
		})
	}
}
