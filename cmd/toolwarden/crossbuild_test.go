package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The program builds for macOS and Windows too, so that the README's
// `go install ./cmd/toolwarden` works there (warm hooks and the approval inbox's
// checks are Unix-only; elsewhere they fail closed).
func TestTheProgramBuildsForMacOSAndWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the module")
	}
	t.Parallel()
	for _, goos := range []string{"darwin", "windows"} {
		cmd := exec.Command("go", "build", "./cmd/...")
		cmd.Dir = filepath.Join("..", "..")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GOOS=%s go build ./cmd/...: %v\n%s", goos, err, out)
		}
	}
}
