package plugin

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// testCache is one compilation cache for the package's tests: the Go
// guests take seconds to compile (more under -race), once.
var testCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolwarden-plugin-test-")
	if err != nil {
		panic(err)
	}
	testCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// newRuntime is a runtime with the tests' compilation cache and a quiet log.
func newRuntime(t testing.TB, opts Options) *Runtime {
	t.Helper()
	if opts.CacheDir == "" && !opts.NoDiskCache {
		opts.CacheDir = testCache
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	rt, err := NewRuntime(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadWasm loads a .wasm file as policy name.
func loadWasm(t testing.TB, rt *Runtime, pol config.Policy, path string) (*Plugin, error) {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	pol.Wasm = abs
	return Load(context.Background(), rt, &pol, nil)
}

// requireTool finds a toolchain binary under testkit's rule: skipped
// without it, failed instead in CI.
func requireTool(t testing.TB, name string) string {
	t.Helper()
	return testkit.LookPath(t, name)
}

var testTool = &hints.Tool{Name: "write_file", Title: "Write File", HashHex: "3f1c9a0e5b7d2c4f6a8e0b1d3c5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e"}

func checkInput(args string, labels ...string) *policy.CheckInput {
	return &policy.CheckInput{
		Session: "s1", Labels: labels, Server: "fs", App: "fs", Tool: testTool,
		Arguments: []byte(args),
		Caps:      hints.Capabilities{CanExfiltrate: true},
		Baseline:  policy.Ask, Mode: config.ModeAuto, Rememberable: true,
	}
}
