package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTheREADMEApprovalChannelSnippetValidates: the README's
// approval_channel and [webhook] block, as it is today, is a config the
// real binary accepts, and a typo in its channel is refused at its line.
func TestTheREADMEApprovalChannelSnippetValidates(t *testing.T) {
	t.Parallel()
	block := readmeBlock(t, `approval_channel = "both"`)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runTWStatus(t, "", "validate", "--config", cfg)
	if code != 0 || !strings.HasPrefix(stdout, "ok: 1 file(s)") {
		t.Fatalf("the README's block: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	bad := strings.Replace(block, `"both"`, `"bothh"`, 1)
	if err := os.WriteFile(cfg, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runTWStatus(t, "", "validate", "--config", cfg)
	if code != 1 || !strings.Contains(stderr, cfg+":1:") || !strings.Contains(stderr, "approval_channel") {
		t.Fatalf("a misspelt channel: exit %d, stderr:\n%s", code, stderr)
	}
}
