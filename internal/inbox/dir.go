package inbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// EnvRuntimeDir names the variable that overrides the rendezvous directory
// (tests and unusual setups; every process that should meet must agree).
const EnvRuntimeDir = "TOOLWARDEN_RUNTIME_DIR"

// Sub-directories of the rendezvous directory.
const (
	asksDir    = "asks"
	answersDir = "answers"
	linksDir   = "links"
)

// Dir returns the rendezvous directory every toolwarden process of this user
// uses, creating it (0700) when missing: $TOOLWARDEN_RUNTIME_DIR if set, else
// $XDG_RUNTIME_DIR/toolwarden, else <os.TempDir()>/toolwarden-<uid>. It is
// refused when it is a symlink, not owned by the current user, or open to the
// group or others: anyone who can write there could answer asks.
func Dir() (string, error) {
	dir := os.Getenv(EnvRuntimeDir)
	switch {
	case dir != "":
	case os.Getenv("XDG_RUNTIME_DIR") != "":
		dir = filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "toolwarden")
	default:
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("toolwarden-%d", os.Getuid()))
	}
	if err := prepare(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// prepare creates dir and its sub-directories (0700) when missing and checks
// each is a private directory of this user.
func prepare(dir string) error {
	if !filepath.IsAbs(dir) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("inbox: rendezvous directory %s: %w", dir, err)
		}
		dir = abs
	}
	for _, d := range []string{dir, filepath.Join(dir, asksDir), filepath.Join(dir, answersDir), filepath.Join(dir, linksDir)} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("inbox: cannot create the rendezvous directory %s: %w (set %s to a private directory)", d, err, EnvRuntimeDir)
		}
		if err := checkPrivate(d); err != nil {
			return err
		}
	}
	return nil
}

// checkPrivate refuses a path that is not a directory owned by this user
// and closed to everyone else.
func checkPrivate(d string) error {
	fi, err := os.Lstat(d)
	if err != nil {
		return fmt.Errorf("inbox: rendezvous directory %s: %w", d, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("inbox: rendezvous directory %s is a symlink; refusing it (another user could point it anywhere): remove it or set %s to a private directory", d, EnvRuntimeDir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("inbox: rendezvous directory %s is not a directory: remove it or set %s", d, EnvRuntimeDir)
	}
	if uid, ok := ownerUID(fi); ok && uid != os.Getuid() {
		return fmt.Errorf("inbox: rendezvous directory %s belongs to uid %d, not to you (uid %d); refusing it: remove it or set %s to a private directory", d, uid, os.Getuid(), EnvRuntimeDir)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("inbox: rendezvous directory %s has mode %04o, so other users could read or answer asks; run chmod 700 %s", d, perm, d)
	}
	return nil
}
