package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeBlock returns the first fenced block of README.md that has want
// in it, so the test runs what the README shows, as it is today.
func readmeBlock(t *testing.T, want string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, block := range strings.Split(string(data), "```") {
		if i%2 == 1 && strings.Contains(block, want) {
			_, body, _ := strings.Cut(block, "\n") // drop the language tag
			return body
		}
	}
	t.Fatalf("README.md has no block with %q", want)
	return ""
}

// runTWStatus runs the real binary and returns its exit status and output.
func runTWStatus(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(twBin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errOut.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

// TestValidateRefusesTheREADMEPluginSnippetUntilItsPluginExists: the
// README's [policies.mine] names a plugin nobody has built yet. validate
// used to say "ok" while every call would then be denied; it must fail at
// the policy's line, and pass once the .wasm is there.
func TestValidateRefusesTheREADMEPluginSnippetUntilItsPluginExists(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(readmeBlock(t, "[policies.mine]")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runTWStatus(t, "", "validate", "--config", cfg)
	if code != 1 || stdout != "" || !strings.Contains(stderr, cfg+":") || !strings.Contains(stderr, "policies.mine: plugin does not load") {
		t.Fatalf("without the plugin: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}

	// Any real plugin will do as "mine": the first-party trifecta.
	wasm, err := os.ReadFile(filepath.Join(root, "plugins", "trifecta.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "plugins"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugins", "mine.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runTWStatus(t, "", "validate", "--config", cfg)
	if code != 0 || !strings.HasPrefix(stdout, "ok: 1 file(s)") || stderr != "" {
		t.Fatalf("with the plugin: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

func TestCheckReadsCallsFromStdinAndRefusesAMisspeltKeyAtItsLine(t *testing.T) {
	t.Parallel()
	call := `{"server": "fs", "tool": {"name": "read_text_file", "annotations": {"readOnlyHint": true}}, "arguments": {"path": "/tmp/x"}}`
	if code, stdout, stderr := runTWStatus(t, call, "check", "-"); code != 0 || !strings.Contains(stdout, `"decision":"allow"`) {
		t.Fatalf("check -: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	bad := "{\n  \"sesion\": \"a\",\n" + call[1:]
	code, stdout, stderr := runTWStatus(t, bad, "check", "-")
	want := `toolwarden check: <stdin>:2:3: call 1: unknown key "sesion" (did you mean "session"?)`
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, want) {
		t.Fatalf("misspelt key: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
