package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate warns, without failing, when the webhook's secret is not in the
// environment: at send time the webhook would post nothing.
func TestValidateWarnsWhenTheWebhookSecretIsUnset(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "config.toml")
	const toml = "approval_channel = \"inbox\"\n[webhook]\nurl = \"https://hooks.example.com/tw\"\nsecret_env = \"TW_TEST_WEBHOOK_SECRET\"\n"
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLIEnv(t, map[string]string{}, "", "validate", "--config", cfg)
	if code != exitOK || !strings.HasPrefix(stdout, "ok:") ||
		!strings.Contains(stderr, cfg+":2:") || !strings.Contains(stderr, "$TW_TEST_WEBHOOK_SECRET is not set here") {
		t.Fatalf("secret unset: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = runCLIEnv(t, map[string]string{"TW_TEST_WEBHOOK_SECRET": "s3cr3t"}, "", "validate", "--config", cfg)
	if code != exitOK || strings.Contains(stderr, "not set") {
		t.Fatalf("secret set: exit %d, stderr %q", code, stderr)
	}
}
