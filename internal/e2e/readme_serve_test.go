package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTheREADMEsTeamConfigMeansWhatItSays: the README's serve block is a
// config toolwarden reads, and its group rule holds: fs__write_file is
// denied to a caller outside dev, and asked of a lead for one in it.
func TestTheREADMEsTeamConfigMeansWhatItSays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "serve.toml")
	if err := os.WriteFile(cfg, []byte(readmeBlock(t, "[serve.auth]")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokens.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runTWStatus(t, "", "validate", "--config", cfg); code != 0 {
		t.Fatalf("validate: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	call, err := os.ReadFile(filepath.Join(root, "examples", "calls", "fs-write-file.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, out, stderr := runTWStatus(t, string(call), "check", "--config", cfg, "--principal", "bob", "--group", "ops", "-")
	if !strings.Contains(out, `"principal_not_allowed"`) {
		t.Fatalf("a caller outside dev: want principal_not_allowed, got %s (stderr %s)", out, stderr)
	}
	_, out, stderr = runTWStatus(t, string(call), "check", "--config", cfg, "--principal", "alice", "--group", "dev", "-")
	if strings.Contains(out, `"principal_not_allowed"`) || !strings.Contains(out, `"decision"`) {
		t.Fatalf("a caller in dev: want a decision without principal_not_allowed, got %s (stderr %s)", out, stderr)
	}
	// The README says a lead approves it: the ask names group:leads as
	// the approvers, which sends it to the team inbox.
	if !strings.Contains(out, `"ask"`) || !strings.Contains(out, `group:leads`) {
		t.Fatalf("a caller in dev: want an ask whose approvers are group:leads, got %s (stderr %s)", out, stderr)
	}
}
