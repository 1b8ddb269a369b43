package config

import "testing"

// TestSandboxModeIsReadLikeCodex: sandbox_mode matters to toolwarden only
// with approval_policy = "never" (danger-full-access runs MCP calls without
// asking), so it is read exactly where Codex reads it.
func TestSandboxModeIsReadLikeCodex(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, want string
		full            bool
	}{
		{"unset means Codex's default", "", "", false},
		{"the top-level value", "sandbox_mode = \"danger-full-access\"\n", "danger-full-access", true},
		{"the active profile's value replaces it", "sandbox_mode = \"danger-full-access\"\nprofile = \"safe\"\n[profiles.safe]\nsandbox_mode = \"read-only\"\n", "read-only", false},
		{"a profile without sandbox_mode keeps the top-level value", "sandbox_mode = \"workspace-write\"\nprofile = \"p\"\n[profiles.p]\nmodel = \"x\"\n", "workspace-write", false},
		{"an inactive profile does not count", "[profiles.yolo]\nsandbox_mode = \"danger-full-access\"\n", "", false},
	} {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadBytes("c.toml", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.SandboxMode.Value != tc.want || cfg.SandboxMode.FullAccess() != tc.full {
				t.Errorf("sandbox_mode = %q (full access %v), want %q (%v)", cfg.SandboxMode.Value, cfg.SandboxMode.FullAccess(), tc.want, tc.full)
			}
		})
	}
	cfg, err := Load("testdata/codex-full.toml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SandboxMode.Value != "workspace-write" {
		t.Errorf("codex-full.toml: sandbox_mode = %q", cfg.SandboxMode.Value)
	}
}
