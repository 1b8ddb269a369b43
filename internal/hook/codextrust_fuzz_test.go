package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCodexFileHooks reads arbitrary Codex config.toml and hooks.json
// files: it never panics, and every hook it lists is a command hook of a
// tool event, keyed where Codex records its state, with a SHA-256 hash.
func FuzzCodexFileHooks(f *testing.F) {
	f.Add([]byte("[[hooks.PreToolUse]]\nmatcher = \"mcp__.*\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"toolwarden hook\"\ntimeout = 30\n"), false)
	f.Add([]byte(`{"hooks":{"PostToolUse":[{"hooks":[{"type":"command","command":"toolwarden hook","timeout":1.5,"async":true,"statusMessage":"s"}]}]}}`), true)
	f.Add([]byte(`{"hooks":{"PermissionRequest":[{"matcher":"x","hooks":[{"type":"command","command":"a\u0001b"}]}],"Stop":[]}}`), true)
	f.Add([]byte("[hooks]\nPreToolUse = 3\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, isJSON bool) {
		name := "config.toml"
		if isJSON {
			name = "hooks.json"
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		hooks, err := codexFileHooks(path)
		if err != nil {
			return
		}
		for _, h := range hooks {
			label := codexHookEvents[h.Event]
			if label == "" || strings.TrimSpace(h.Command) == "" || h.File != path ||
				!strings.HasPrefix(h.Key, path+":"+label+":") ||
				!strings.HasPrefix(h.Hash, "sha256:") || len(h.Hash) != len("sha256:")+64 {
				t.Fatalf("hook %+v of %q", h, data)
			}
		}
	})
}
