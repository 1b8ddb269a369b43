package gemini

import (
	"os"
	"testing"

	"github.com/toolwarden/toolwarden/internal/agents/agenttest"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

// binDir holds toolwarden, built for this run; it is on the agent's PATH.
var binDir string

func TestMain(m *testing.M) {
	// Without the agent every test skips: building would be wasted.
	notInstalled := func() bool {
		_, err := os.Stat(testkit.NPMPath("gemini"))
		return err != nil
	}
	os.Exit(agenttest.Main(m, "gemini", &binDir, notInstalled))
}

// tools returns Gemini CLI and the filesystem MCP server, installed by
// scripts/setup.sh, after checking node runs.
func tools(t testing.TB) (gemini, fsServer string) {
	t.Helper()
	return testkit.NPMBin(t, "gemini"), testkit.NPMBin(t, "mcp-server-filesystem")
}
