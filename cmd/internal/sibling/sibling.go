// Package sibling finds a program installed beside the running one:
// toolwarden finds toolwarden-mcp, toolwarden-hook finds toolwarden. It
// imports the standard library alone (the lean hook client links it).
package sibling

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
)

// Find looks for the program name (with the platform's executable suffix)
// next to this executable first, symlinks resolved, since the programs
// are installed together; then on PATH. The error names where it looked.
//
// It refuses a program that another build made (see SameBuild): the
// running program hands it the user's policy, and another version could
// read that policy differently, or more loosely.
func Find(name string) (string, error) {
	p, err := Locate(name)
	if err != nil {
		return "", err
	}
	if err := SameBuild(p); err != nil {
		return "", err
	}
	return p, nil
}

// SameBuild refuses the program at path unless the same build of the same
// module made it as the running program: the module path, its version,
// and the source revision and whether the tree was modified, when Go
// recorded them (it does for binaries built from a git checkout). It reads
// what Go wrote into the binary; it does not run it.
func SameBuild(path string) error {
	own, ok := debug.ReadBuildInfo()
	if !ok {
		return nil // a build without module information: nothing to compare
	}
	other, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s is not a build of %s (%v)", path, own.Main.Path, err)
	}
	if want, got := Identity(own), Identity(other); got != want {
		return fmt.Errorf("%s is another build (%s) than this program (%s), and could decide differently", path, got, want)
	}
	return nil
}

// Identity names a build: "module version", then the revision and
// "+modified" when Go recorded them.
func Identity(bi *debug.BuildInfo) string {
	id := bi.Main.Path + " " + bi.Main.Version
	if rev, _, modified := VCS(bi); rev != "" {
		id += " " + rev
		if modified {
			id += "+modified"
		}
	}
	return id
}

// VCS is what Go recorded of the source a build came from: its revision
// and commit time ("" when it recorded none), and whether the tree had
// changes not committed.
func VCS(bi *debug.BuildInfo) (revision, time string, modified bool) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			time = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return revision, time, modified
}

// Locate is Find without the build check: for a caller that checks the
// build itself before it runs the program (toolwarden-hook only talks to
// a warm process of its own build until then: warm.Key).
func Locate(name string) (string, error) {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	var tried []string
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		p := filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
		tried = append(tried, filepath.Dir(self))
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	tried = append(tried, "PATH")
	return "", errors.New(name + " is not installed (looked in " + strings.Join(tried, " and ") + ")")
}
