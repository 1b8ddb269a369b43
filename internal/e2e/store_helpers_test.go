package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// exitStatus is the exit status err reports for a command that ran: 0 for
// none, the status of an exit. Any other error means the command did not
// run at all, and fails the test.
func exitStatus(t testing.TB, err error) int {
	t.Helper()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// startCountingUpstream runs the testserver over HTTP with its echo
// counting each message (so a call run twice shows), and returns its MCP
// URL once it accepts connections.
func startCountingUpstream(t testing.TB) string {
	t.Helper()
	addr := benchFreeAddr(t)
	startBenchProc(t, "upstream testserver", testServer, "-http", addr, "-count-echo", "-state", t.TempDir())
	benchWaitDial(t, addr)
	return "http://" + addr + "/mcp"
}

// writeSessionSecret writes a fresh random session secret into dir, the
// one file every replica of a fleet reads, and returns its path.
func writeSessionSecret(t testing.TB, dir string) string {
	t.Helper()
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	// Hex, as the docs advise (openssl rand -hex 32): raw bytes ending in
	// whitespace would be trimmed by the loader below the 32 it wants.
	path := filepath.Join(dir, "session.secret")
	if err := os.WriteFile(path, []byte(hex.EncodeToString(secret)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// alwaysAndTaint has alice answer "always" to the one ask for gate__echo
// on replica s (the grant the store must keep), then taints session with
// a private read and untrusted input; it returns alice's client.
func alwaysAndTaint(t *testing.T, s *opsServe, message, session string) *goClient {
	t.Helper()
	ask := answers("always")
	c := storeClient(t, s, legacyEra, "alice-token", ask)
	if out, isErr := c.call(t, "gate__echo", map[string]any{"message": message}); isErr || ask.count() != 1 {
		t.Fatalf("alice's always: %q (error %v, asked %d)", out, isErr, ask.count())
	}
	for _, step := range []struct {
		tool string
		args map[string]any
	}{{"tri__big", map[string]any{"n": 8}}, {"tri__headers", nil}} {
		if r := storeCall(t, s, "alice-token", session, step.tool, step.args, nil); r.isError() {
			t.Fatalf("%s in session %s: %s", step.tool, session, r.body)
		}
	}
	return c
}
