package gemini

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Filled in by TestMain.
var (
	root   string // module root
	binDir string // toolwarden, built for this run; on the agent's PATH
	twBin  string
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
	if _, err := os.Stat(geminiPath()); err != nil && os.Getenv("TOOLWARDEN_REQUIRE_TOOLCHAINS") != "1" {
		// Every test skips without the agent: building would be wasted.
		return m.Run()
	}
	if dir := os.Getenv("TOOLWARDEN_AGENT_BINDIR"); dir != "" {
		// A binary built beforehand (go build -o DIR/ ./cmd/toolwarden):
		// reruns skip the build.
		binDir, twBin = dir, filepath.Join(dir, "toolwarden")
		return m.Run()
	}
	binDir, err = os.MkdirTemp("", "toolwarden-gemini-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(binDir)
	twBin = filepath.Join(binDir, "toolwarden")
	cmd := exec.Command("go", "build", "-o", binDir+string(filepath.Separator), "./cmd/toolwarden")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "gemini: building toolwarden: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

func geminiPath() string {
	return filepath.Join(root, "scripts", "npm", "node_modules", ".bin", "gemini")
}

// needToolchain skips a test whose toolchain is missing, except in CI
// (TOOLWARDEN_REQUIRE_TOOLCHAINS=1), where it fails: CI must run every test.
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

// tools returns Gemini CLI and the filesystem MCP server, installed by
// scripts/setup.sh, after checking node runs.
func tools(t testing.TB) (gemini, fsServer string) {
	t.Helper()
	_, err := exec.LookPath("node")
	needToolchain(t, "node", err)
	gemini = geminiPath()
	_, err = os.Stat(gemini)
	needToolchain(t, "Gemini CLI (npm @google/gemini-cli)", err)
	fsServer = filepath.Join(root, "scripts", "npm", "node_modules", ".bin", "mcp-server-filesystem")
	_, err = os.Stat(fsServer)
	needToolchain(t, "npm package @modelcontextprotocol/server-filesystem", err)
	return gemini, fsServer
}
