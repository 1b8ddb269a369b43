package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A stateful plugin's budget through the real binary: the proxy in front
// of server-filesystem, a Go guest (internal/plugin/testdata/gobudget) that
// lets 2 calls per session through and asks after that, and 5 calls sent
// at once by one client. Exactly 2 run; the 3 others are asked, which a
// client without elicitation gets as a refusal. A second client is a
// second session with its own budget.
func TestProxyPluginBudgetHoldsUnderConcurrentCalls(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	file := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(file, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	wasm := filepath.Join(t.TempDir(), "budget.wasm")
	build := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", wasm, "./internal/plugin/testdata/gobudget")
	build.Dir = root
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	cfg := writeFile(t, "budget.toml", fmt.Sprintf(`
[mcp_servers.fs]
command = %q
args = [%q]

[policies.budget]
wasm = %q
config = { budget = 2 }
`, fsBin, dir, wasm))
	for session := 0; session < 2; session++ {
		c := startGo(t, false, nil, twBin, proxyArgs(t, cfg)...)
		var mu sync.Mutex
		var ran, refused []string
		var wg sync.WaitGroup
		for range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, isErr := c.call(t, "fs__read_text_file", map[string]any{"path": file})
				mu.Lock()
				defer mu.Unlock()
				if isErr {
					refused = append(refused, out)
				} else {
					ran = append(ran, out)
				}
			}()
		}
		wg.Wait()
		if len(ran) != 2 || len(refused) != 3 {
			t.Fatalf("session %d: %d calls ran, %d refused; want 2 and 3\nran: %q\nrefused: %q", session, len(ran), len(refused), ran, refused)
		}
		for _, out := range refused {
			if !strings.Contains(out, "budget_spent") {
				t.Errorf("session %d: a refusal that does not name the budget: %q", session, out)
			}
		}
	}
}
