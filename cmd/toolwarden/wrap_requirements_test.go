package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An admin's server allow-lists hold for the command wrap is given, not
// only for [mcp_servers] a layer configures: wrap refuses to start a
// server they do not admit, saying which requirement decided, before the
// server runs.
func TestWrapRefusesAServerTheRequirementsDoNotAllow(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, requirements string
		args               []string
		want               string // "" when wrap must get past the check
	}{
		{
			name:         "a command outside allowed_servers",
			requirements: "[[allowed_servers]]\ncommand = \"docs-mcp\"\n",
			args:         []string{"--app", "docs", "--", "sh", "-c", "exit 0"},
			want:         `server "docs" (sh) is not in allowed_servers (required by `,
		},
		{
			name:         "a name Codex's mcp_servers allow-list does not list",
			requirements: "[mcp_servers.docs.identity]\ncommand = \"sh\"\n",
			args:         []string{"--app", "other", "--", "sh", "-c", "exit 0"},
			want:         `server "other" is not in the mcp_servers allow-list (docs) (required by `,
		},
		{
			name:         "a listed name run with another command",
			requirements: "[mcp_servers.docs.identity]\ncommand = \"docs-mcp\"\n",
			args:         []string{"--app", "docs", "--", "sh", "-c", "exit 0"},
			want:         `does not match the required command "docs-mcp"`,
		},
		{
			name:         "a listed name with its command gets past the check",
			requirements: "[mcp_servers.docs.identity]\ncommand = \"sh\"\n",
			args:         []string{"--app", "docs", "--startup-timeout", "2s", "--", "sh", "-c", "exit 0"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			reqs := filepath.Join(dir, "requirements.toml")
			if err := os.WriteFile(reqs, []byte(tc.requirements), 0o600); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"wrap", "--requirements", reqs, "--approvals", filepath.Join(dir, "a.json")}, tc.args...)
			code, _, stderr := runCLI(t, "", args...)
			refused := strings.Contains(stderr, "refusing to start the server")
			if tc.want == "" {
				if refused {
					t.Fatalf("an allowed server was refused: %s", stderr)
				}
				return
			}
			if code != exitError || !refused || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, reqs+":1:") {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q, naming %s:1:", code, stderr, exitError, tc.want, reqs)
			}
		})
	}
}
