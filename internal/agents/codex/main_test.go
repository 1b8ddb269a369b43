package codex

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Paths filled in by TestMain.
var (
	root   string // module root
	binDir string // toolwarden, built for this run; first on Codex's PATH
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	root, err = filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binDir, err = os.MkdirTemp("", "toolwarden-codex-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(binDir)
	cmd := exec.Command("go", "build", "-o", binDir+string(filepath.Separator), "./cmd/toolwarden")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "codex: building toolwarden: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// needToolchain skips a test whose toolchain (node, the npm packages) is
// missing, except in CI (TOOLWARDEN_REQUIRE_TOOLCHAINS=1), where a missing
// toolchain fails it: CI must run every test.
func needToolchain(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("TOOLWARDEN_REQUIRE_TOOLCHAINS") == "1" {
		t.Fatalf("%s is required (TOOLWARDEN_REQUIRE_TOOLCHAINS=1) but unavailable: %v (run scripts/setup.sh)", what, err)
	}
	t.Skipf("%s unavailable: %v (run scripts/setup.sh)", what, err)
}

// npmBin returns scripts/npm/node_modules/.bin/<name>, installed by
// scripts/setup.sh, after checking node runs.
func npmBin(t testing.TB, name string) string {
	t.Helper()
	_, err := exec.LookPath("node")
	needToolchain(t, "node", err)
	p := filepath.Join(root, "scripts", "npm", "node_modules", ".bin", name)
	_, err = os.Stat(p)
	needToolchain(t, "npm package "+name, err)
	return p
}
