// Package agenttest is what the real-agent suites (internal/agents/...)
// share besides internal/testkit: the toolwarden binary built once per
// package, unless every test would skip because the agent is missing.
package agenttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// Main builds toolwarden into a new folder, sets *binDir to it, runs the
// package's tests and removes the folder; it returns the exit code for
// os.Exit. With TOOLWARDEN_AGENT_BINDIR set, a binary built beforehand
// (go build -o DIR/ ./cmd/toolwarden) is used instead. skip reports that
// every test would skip (the agent is not installed, outside CI), so
// building would be wasted; nil means never.
func Main(m *testing.M, suite string, binDir *string, skip func() bool) int {
	if skip != nil && skip() && !testkit.RequireToolchains() {
		return m.Run()
	}
	if dir := os.Getenv("TOOLWARDEN_AGENT_BINDIR"); dir != "" {
		*binDir = dir
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "toolwarden-"+suite+"-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/toolwarden")
	cmd.Dir = testkit.Root()
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: building toolwarden: %v\n%s", suite, err, out)
		return 1
	}
	*binDir = dir
	return m.Run()
}
