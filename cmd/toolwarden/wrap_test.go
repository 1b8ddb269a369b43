package main

import (
	"strings"
	"testing"
)

func TestLegacyAppNameNamesTheServerNotTheLauncher(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cmd  string
		want string
	}{
		{"npx -y @modelcontextprotocol/server-filesystem /home/me/src", "filesystem"},
		{"npx -y @modelcontextprotocol/server-memory@2026.8.31", "memory"},
		{"uvx mcp-server-git --repository .", "git"},
		{"node ./build/index.js", "index"},
		{"python3 -m weather_mcp", "weather_mcp"},
		{"docker run -i --rm ghcr.io/github/github-mcp-server", "github"},
		{"/usr/local/bin/mcp-server-sqlite --db x.db", "sqlite"},
		{"./scripts/node_modules/.bin/mcp-server-everything", "everything"},
		{"my-tools", "my-tools"},
		{"npx", "npx"},
	}
	for _, c := range cases {
		f := strings.Fields(c.cmd)
		if got := legacyAppName(f[0], f[1:]); got != c.want {
			t.Errorf("legacyAppName(%q) = %q, want %q", c.cmd, got, c.want)
		}
	}
}

func TestWrapUsageErrors(t *testing.T) {
	t.Parallel()
	if code, _, stderr := runCLI(t, "", "wrap"); code != exitUsage || !strings.Contains(stderr, "no server command") {
		t.Fatalf("wrap without a command: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "proxy", "extra"); code != exitUsage || !strings.Contains(stderr, "unexpected argument") {
		t.Fatalf("proxy with an argument: exit %d, %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "proxy", "--approvals", t.TempDir()+"/a.json"); code != exitError || !strings.Contains(stderr, "no enabled [mcp_servers") {
		t.Fatalf("proxy without servers: exit %d, %s", code, stderr)
	}
}
