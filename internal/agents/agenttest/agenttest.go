// Package agenttest is what the real-agent suites (internal/agents/...)
// share: the toolwarden binary built once per package, the npm packages
// scripts/setup.sh installs, and the rule that a missing toolchain skips a
// test on a developer's machine and fails it in CI.
package agenttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Root is the module root.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Main builds toolwarden into a new folder, sets *binDir to it, runs the
// package's tests and removes the folder; it returns the exit code for
// os.Exit. With TOOLWARDEN_AGENT_BINDIR set, a binary built beforehand
// (go build -o DIR/ ./cmd/toolwarden) is used instead. skip reports that
// every test would skip (the agent is not installed, outside CI), so
// building would be wasted; nil means never.
func Main(m *testing.M, suite string, binDir *string, skip func() bool) int {
	if skip != nil && skip() && os.Getenv("TOOLWARDEN_REQUIRE_TOOLCHAINS") != "1" {
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
	cmd.Dir = Root()
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: building toolwarden: %v\n%s", suite, err, out)
		return 1
	}
	*binDir = dir
	return m.Run()
}

// NeedToolchain skips a test whose toolchain (node, the npm packages) is
// missing, except in CI (TOOLWARDEN_REQUIRE_TOOLCHAINS=1), where a missing
// toolchain fails it: CI must run every test.
func NeedToolchain(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("TOOLWARDEN_REQUIRE_TOOLCHAINS") == "1" {
		t.Fatalf("%s is required (TOOLWARDEN_REQUIRE_TOOLCHAINS=1) but unavailable: %v (run scripts/setup.sh)", what, err)
	}
	t.Skipf("%s unavailable: %v (run scripts/setup.sh)", what, err)
}

// NPMPath is scripts/npm/node_modules/.bin/<name>.
func NPMPath(name string) string {
	return filepath.Join(Root(), "scripts", "npm", "node_modules", ".bin", name)
}

// NPMBin returns NPMPath(name), installed by scripts/setup.sh, after
// checking that node runs.
func NPMBin(t testing.TB, name string) string {
	t.Helper()
	_, err := exec.LookPath("node")
	NeedToolchain(t, "node", err)
	p := NPMPath(name)
	_, err = os.Stat(p)
	NeedToolchain(t, "npm package "+name, err)
	return p
}
