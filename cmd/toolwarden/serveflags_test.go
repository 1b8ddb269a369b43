package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

func TestWrapAndProxySayWhichPluginDidNotLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	src := "[policies.mine]\nwasm = \"missing.wasm\"\n\n[policy.argguard]\nbuiltin = \"argguard\"\n\n[mcp_servers.t]\ncommand = \"true\"\n"
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"wrap", "--config", cfg, "--approvals", filepath.Join(dir, "a.json"), "--", "true"},
		{"proxy", "--config", cfg, "--approvals", filepath.Join(dir, "b.json")},
	} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			// The upstream's goroutines may still log after run returns.
			var stderrBuf testkit.Buffer
			run(&env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &stderrBuf, getenv: func(string) string { return "" }}, args)
			stderr := stderrBuf.String()
			for _, want := range []string{
				"policy plugin did not load",
				"policies.mine",
				"missing.wasm",
				"policy", "is read by neither toolwarden nor Codex",
			} {
				if !strings.Contains(stderr, want) {
					t.Errorf("no %q on stderr:\n%s", want, stderr)
				}
			}
		})
	}
}
