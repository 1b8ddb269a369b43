package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/store/pgtest"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

// Paths filled in by TestMain.
var (
	root       string // module root
	twBin      string // the real toolwarden binary, built for this run
	testServer string // internal/testserver, built for this run
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	root = testkit.Root()
	dir, err := os.MkdirTemp("", "toolwarden-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// Every wrap and proxy the tests start writes the tool catalog here,
	// not into the user's cache, and finds no config of the machine's or
	// the developer's own: a command given no --config reads only what a
	// test writes under these folders.
	// HOME too, so that no wrap writes the user's audit log or state; the
	// caches the runs share (Go's, the compiled plugins') stay where they
	// were.
	if err := keepCaches(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for k, sub := range map[string]string{"TOOLWARDEN_CATALOG": "catalog", "XDG_CONFIG_HOME": "config", "TOOLWARDEN_SYSTEM_CONFIG_DIR": "etc", "HOME": "home"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := os.Setenv(k, filepath.Join(dir, sub)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	twBin = filepath.Join(dir, "toolwarden")
	testServer = filepath.Join(dir, "testserver")
	for _, b := range []struct {
		outDir string
		pkgs   []string
		cover  bool
	}{
		{dir, []string{"./cmd/toolwarden"}, true},
		{dir, []string{"./internal/testserver"}, false},
	} {
		args := []string{"build", "-o", b.outDir + string(filepath.Separator)}
		if raceEnabled {
			// The proxy under test runs with the race detector too.
			args = append(args, "-race")
		}
		if cover := os.Getenv("TOOLWARDEN_E2E_COVERDIR"); cover != "" && b.cover {
			// scripts/coverage.sh: the binary counts what the e2e tests
			// run of the module, into GOCOVERDIR, which its runs inherit.
			args = append(args, "-cover", "-coverpkg=github.com/toolwarden/toolwarden/...")
			if err := os.Setenv("GOCOVERDIR", cover); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		cmd := exec.Command("go", append(args, b.pkgs...)...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: building %v: %v\n%s", b.pkgs, err, out)
			return 1
		}
	}
	// The store tests share one Postgres cluster (pgtest.Shared), which
	// pgtest.Main stops once every test has run.
	return pgtest.Main(m)
}

// npmServer returns the path of an MCP server installed by scripts/setup.sh
// (scripts/npm/node_modules/.bin/<name>), after checking node runs.
func npmServer(t testing.TB, name string) string {
	t.Helper()
	return testkit.NPMBin(t, name)
}

// nodeSDK returns the folder of the official MCP TypeScript SDK.
func nodeSDK(t testing.TB) string {
	t.Helper()
	testkit.LookPath(t, "node")
	p := filepath.Join(root, "scripts", "npm", "node_modules", "@modelcontextprotocol", "sdk")
	_, err := os.Stat(filepath.Join(p, "dist", "esm", "client", "index.js"))
	testkit.Need(t, "the MCP TypeScript SDK", err)
	return p
}

// writeFile writes a file under t.TempDir() and returns its path.
func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// newLog collects a process's stderr and shows it when the test fails.
func newLog(t testing.TB, name string) *testkit.Buffer {
	l := &testkit.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, l.String())
		}
	})
	return l
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logged waits until the process's stderr, which the test reads from a
// pipe beside its calls, says want: a line written just before an answer
// may reach the test just after it.
func logged(t testing.TB, l *testkit.Buffer, want string) {
	t.Helper()
	eventually(t, 10*time.Second, fmt.Sprintf("%q on stderr", want), func() bool { return strings.Contains(l.String(), want) })
}

func mustContain(t testing.TB, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Fatalf("want %q in:\n%s", want, got)
	}
}

// keepCaches pins the caches that default to places under HOME (Go's
// build cache and GOPATH, the compiled plugins' cache) to where they are
// now, before the tests move HOME.
func keepCaches() error {
	home, err := os.UserHomeDir()
	if err != nil {
		return err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return err
	}
	for k, v := range map[string]string{"GOPATH": filepath.Join(home, "go"), "GOCACHE": filepath.Join(cache, "go-build"), "XDG_CACHE_HOME": cache} {
		if os.Getenv(k) == "" {
			if err := os.Setenv(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}
