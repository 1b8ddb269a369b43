// Package sibling finds a program installed beside the running one:
// toolwarden finds toolwarden-mcp, toolwarden-hook finds toolwarden. It
// imports the standard library alone (the lean hook client links it).
package sibling

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Find looks for the program name (with the platform's executable suffix)
// next to this executable first, symlinks resolved, since the programs
// are installed together; then on PATH. The error names where it looked.
func Find(name string) (string, error) {
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
