package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolwarden/toolwarden/host"
)

// The example agent's servers resolve paths as the proxy's and the hooks'
// do: a folder given as --root=DIR counts, and a folder reached through a
// symbolic link counts under its real path too, since server-filesystem
// resolves against that one.
func TestTheAgentsServerContextIsTheProxys(t *testing.T) {
	dir := t.TempDir()
	real, link, flagged := filepath.Join(dir, "real"), filepath.Join(dir, "link"), filepath.Join(dir, "flagged")
	for _, d := range []string{real, flagged} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	s := &host.Server{Name: "fs", Command: "npx", Args: []string{"-y", "pkg", link, "--root=" + flagged}, Cwd: dir,
		Env: map[string]string{"HOME": dir}}
	sc := serverContext(s)
	if sc.Cwd != dir || sc.Home != dir {
		t.Errorf("cwd %q, home %q; want both %q", sc.Cwd, sc.Home, dir)
	}
	if want := []string{link, real, flagged}; !slices.Equal(sc.ArgDirs, want) {
		t.Errorf("ArgDirs %q, want %q", sc.ArgDirs, want)
	}
}
