package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireEnv is the variable CI sets to 1 (.ci/run): a test whose toolchain
// is missing then fails instead of skipping, so that CI runs every test.
const RequireEnv = "TOOLWARDEN_REQUIRE_TOOLCHAINS"

// RequireToolchains reports whether a missing toolchain is a failure
// (RequireEnv=1) rather than a skip.
func RequireToolchains() bool { return os.Getenv(RequireEnv) == "1" }

// Need skips the test when err says the toolchain what is missing, and
// fails it instead when RequireToolchains: CI must run every test.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if RequireToolchains() {
		t.Fatalf("%s is required (%s=1) but unavailable: %v (run scripts/setup.sh)", what, RequireEnv, err)
	}
	t.Skipf("%s unavailable: %v (run scripts/setup.sh)", what, err)
}

// LookPath is exec.LookPath(name), skipping the test (failing it under
// RequireEnv=1) when name is not on the PATH.
func LookPath(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	Need(t, name, err)
	return p
}

// NPMPath is scripts/npm/node_modules/.bin/<name>, where scripts/setup.sh
// installs the npm packages the tests run.
func NPMPath(name string) string {
	return Path("scripts", "npm", "node_modules", ".bin", name)
}

// NPMBin returns NPMPath(name) after checking that node is on the PATH and
// the package is installed, skipping the test (failing it under
// RequireEnv=1) when either is missing.
func NPMBin(t testing.TB, name string) string {
	t.Helper()
	LookPath(t, "node")
	p := NPMPath(name)
	_, err := os.Stat(p)
	Need(t, "npm package "+filepath.Base(p), err)
	return p
}
