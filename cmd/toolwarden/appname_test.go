package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
)

func TestDefaultAppNameIsThePackageTheCommandRuns(t *testing.T) {
	t.Parallel()
	// A Node server installed under node_modules, started by its script
	// path, and a Python project started by its main file.
	dir := t.TempDir()
	pkg := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem")
	writeTestFile(t, filepath.Join(pkg, "package.json"), `{"name": "@modelcontextprotocol/server-filesystem", "version": "1.0.0"}`)
	writeTestFile(t, filepath.Join(pkg, "dist", "index.js"), "")
	other := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-memory")
	writeTestFile(t, filepath.Join(other, "package.json"), `{"name": "@modelcontextprotocol/server-memory"}`)
	writeTestFile(t, filepath.Join(other, "dist", "index.js"), "")
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(pkg, "dist", "index.js"), filepath.Join(dir, "node_modules", ".bin", "fs-link.js")); err != nil {
		t.Fatal(err)
	}
	py := filepath.Join(dir, "weather")
	writeTestFile(t, filepath.Join(py, "pyproject.toml"), "[project]\nname = \"weather-mcp\"\n")
	writeTestFile(t, filepath.Join(py, "src", "main.py"), "")
	bare := filepath.Join(dir, "my-tool", "dist", "index.js")
	writeTestFile(t, bare, "")

	cases := []struct {
		name string
		cmd  string
		want string
	}{
		{"npx names the package without scope", "npx -y @modelcontextprotocol/server-filesystem /home/me/src", "server-filesystem"},
		{"a version is not part of the name", "npx -y @modelcontextprotocol/server-memory@2026.8.31", "server-memory"},
		{"npx --package names the package", "npx --package=@acme/tools acme-serve", "tools"},
		{"pnpm dlx is a launcher", "pnpm dlx @acme/mcp-notes", "mcp-notes"},
		{"node on a script walks up to package.json", "node " + filepath.Join(pkg, "dist", "index.js") + " /tmp", "server-filesystem"},
		{"two Node servers never share index", "node " + filepath.Join(other, "dist", "index.js"), "server-memory"},
		{"a symlinked script is followed to its package", "node " + filepath.Join(dir, "node_modules", ".bin", "fs-link.js"), "server-filesystem"},
		{"a script without a manifest is named after its folder", "node " + bare, "my-tool"},
		{"node flags with values are skipped", "node --require ./x.js " + filepath.Join(pkg, "dist", "index.js"), "server-filesystem"},
		{"python -m names the module", "python3 -m weather_mcp --port 1", "weather_mcp"},
		{"python on a script reads pyproject.toml", "python " + filepath.Join(py, "src", "main.py"), "weather-mcp"},
		{"uvx names the package", "uvx mcp-server-git --repository .", "mcp-server-git"},
		{"uvx --from names the package, not the command", "uvx --from mcp-server-time==1.0 mcp-time", "mcp-server-time"},
		{"uvx --python value is skipped", "uvx --python 3.12 mcp-server-fetch", "mcp-server-fetch"},
		{"uv tool run is a launcher", "uv tool run mcp-server-sqlite", "mcp-server-sqlite"},
		{"docker names the image", "docker run -i --rm ghcr.io/github/github-mcp-server:v1", "github-mcp-server"},
		{"docker -e values are not the image", "docker run -i --rm -e GITHUB_TOKEN mcp/github", "github"},
		{"a binary is its base name", "/usr/local/bin/mcp-server-sqlite --db x.db", "mcp-server-sqlite"},
		{"a Windows binary loses .exe", "my-tools.exe", "my-tools"},
		{"go run names the package", "go run github.com/acme/mcp/cmd/acme-mcp@latest", "acme-mcp"},
		{"a bare launcher is its own name", "npx", "npx"},
		{"characters TOML keys cannot hold become underscores", "my.server", "my_server"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := strings.Fields(c.cmd)
			if got := defaultAppName(f[0], f[1:]); got != c.want {
				t.Errorf("defaultAppName(%q) = %q, want %q", c.cmd, got, c.want)
			}
		})
	}
}

// A config written for the name an earlier release derived keeps applying:
// a new default name must never make a user's rule silently stop matching.
func TestWrapAppNameKeepsTheNameAnOlderConfigUses(t *testing.T) {
	t.Parallel()
	cmd, args := "npx", []string{"-y", "@modelcontextprotocol/server-filesystem", "/src"}
	load := func(toml string) *config.Config {
		cfg, err := config.LoadBytes("c.toml", []byte(toml))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cases := []struct {
		name, toml, want string
		noted            bool
	}{
		{"no tables: today's name", ``, "server-filesystem", false},
		{"tables for the old name only: the old name", "[apps.filesystem]\nenabled = false\n", "filesystem", true},
		{"a server table for the old name", "[mcp_servers.filesystem]\ncommand = \"npx\"\n", "filesystem", true},
		{"tables for both: today's name", "[apps.filesystem]\nenabled = false\n[apps.server-filesystem]\nenabled = true\n", "server-filesystem", false},
	}
	for _, c := range cases {
		got, note := wrapAppName(load(c.toml), cmd, args)
		if got != c.want || (note != "") != c.noted {
			t.Errorf("%s: %q (note %q), want %q", c.name, got, note, c.want)
		}
	}
}
