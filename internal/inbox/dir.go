package inbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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
// /run/user/<uid>/toolwarden when /run/user/<uid> is a private directory of
// this user, else /tmp/toolwarden-<uid> (<os.TempDir()> where there is no
// /tmp). It is refused when it is a symlink, not owned by the current user,
// or open to the group or others: anyone who can write there could answer
// asks.
//
// The choice depends on the uid alone, never on XDG_RUNTIME_DIR or TMPDIR:
// agents start their MCP servers with a stripped environment (Codex passes
// HOME, PATH, LANG, TERM; the TypeScript SDK HOME, LOGNAME, PATH, SHELL,
// TERM, USER), so a server and the inbox a person starts from a terminal
// would otherwise look in different places. See docs/approvals.md.
func Dir() (string, error) {
	dir := os.Getenv(EnvRuntimeDir)
	if dir == "" {
		dir = defaultDir(os.Getuid())
	}
	if err := prepare(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// Where defaultDir looks; tests point them at their own folders.
var (
	runUserBase = "/run/user"
	tempBase    = fixedTempBase()
)

// defaultDir is the rendezvous directory of uid when nothing overrides it:
// under the per-user runtime directory the system made (/run/user/<uid>,
// private, cleared at logout) when there is one, else under the fixed
// temporary directory.
func defaultDir(uid int) string {
	run := filepath.Join(runUserBase, strconv.Itoa(uid))
	if isPrivateDirOf(run, uid) {
		return filepath.Join(run, "toolwarden")
	}
	return filepath.Join(tempBase, fmt.Sprintf("toolwarden-%d", uid))
}

// isPrivateDirOf reports whether d is a real directory (not a symlink)
// owned by uid and closed to everyone else, as logind makes /run/user/<uid>.
// Anything else (missing, another owner, looser mode) is passed over for
// the temporary directory, where prepare's checks then apply.
func isPrivateDirOf(d string, uid int) bool {
	fi, err := os.Lstat(d)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return false
	}
	owner, ok := ownerUID(fi)
	return ok && owner == uid
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
