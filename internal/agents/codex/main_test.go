package codex

import (
	"os"
	"testing"

	"github.com/toolwarden/toolwarden/internal/agents/agenttest"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

// binDir holds toolwarden, built for this run; it goes first on the agent's PATH.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(agenttest.Main(m, "codex", &binDir, nil))
}

func npmBin(t testing.TB, name string) string { t.Helper(); return testkit.NPMBin(t, name) }
