package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// A Go project made outside any checkout, with no --pdk, builds with the
// network shut (GOPROXY=off, no sum database, an empty module cache) and
// its module passes the project's own cases: the scaffold carries the
// kit it needs. Before, go.mod named a version of the toolwarden module
// that the build had to fetch, and it failed with a raw 403.
func TestPluginNewGoBuildsOutsideACheckoutWithNoNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go plugin")
	}
	if _, err := exec.LookPath("go"); err != nil {
		testkit.Need(t, "go", err)
	}
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "offline-policy")
	if code, out, errOut := runPluginCLI(t, t.TempDir(), "new", "--lang", "go", "--dir", dir, "offline-policy"); code != exitOK {
		t.Fatalf("plugin new: exit %d\n%s%s", code, out, errOut)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), "replace github.com/toolwarden/toolwarden => ./toolwarden-pdk") {
		t.Errorf("go.mod does not use the kit the project carries:\n%s", mod)
	}
	// No network and nothing cached: an empty module cache and GOPATH,
	// no proxy, no sum database, no VCS fetches.
	home := t.TempDir()
	buildScaffold(t, dir, []string{
		"GOPROXY=off", "GOSUMDB=off", "GONOSUMDB=*", "GOPRIVATE=", "GOFLAGS=-mod=mod",
		"GOMODCACHE=" + filepath.Join(home, "modcache"), "GOPATH=" + filepath.Join(home, "gopath"),
		"GOTOOLCHAIN=local", "GOWORK=off", "HOME=" + home,
	})
	wasm := filepath.Join(dir, "offline-policy.wasm")
	code, out, errOut := runPluginCLI(t, t.TempDir(), "test", "-v", wasm, filepath.Join(dir, "cases.json"))
	if code != exitOK || !strings.Contains(out, "PASS: 6/6") {
		t.Fatalf("plugin test: exit %d\n%s%s", code, out, errOut)
	}
}
