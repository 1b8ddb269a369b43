package inbox

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// withBases points defaultDir at private folders for one test.
func withBases(t *testing.T) (run, tmp string) {
	run, tmp = t.TempDir(), t.TempDir()
	oldRun, oldTmp := runUserBase, tempBase
	runUserBase, tempBase = run, tmp
	t.Cleanup(func() { runUserBase, tempBase = oldRun, oldTmp })
	t.Setenv(EnvRuntimeDir, "")
	return run, tmp
}

// The place depends on the uid alone: an agent that strips XDG_RUNTIME_DIR
// or TMPDIR from its servers' environment, or sets them elsewhere, must
// still meet the inbox a person started from a terminal.
func TestDirIgnoresXDGRuntimeDirAndTMPDIR(t *testing.T) {
	_, tmp := withBases(t)
	want := filepath.Join(tmp, "toolwarden-"+strconv.Itoa(os.Getuid()))
	for _, env := range []map[string]string{
		{"XDG_RUNTIME_DIR": t.TempDir(), "TMPDIR": t.TempDir()},
		{"XDG_RUNTIME_DIR": "", "TMPDIR": ""},
		{"XDG_RUNTIME_DIR": "", "TMPDIR": t.TempDir()},
	} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		if got, err := Dir(); err != nil || got != want {
			t.Errorf("with %v: Dir() = %q, %v; want %q", env, got, err, want)
		}
	}
}

func TestDirUsesThePrivateRunUserDirectoryWhenThereIsOne(t *testing.T) {
	run, _ := withBases(t)
	mine := filepath.Join(run, strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(mine, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	if got, err := Dir(); err != nil || got != filepath.Join(mine, "toolwarden") {
		t.Fatalf("Dir() = %q, %v; want it under %s", got, err, mine)
	}
}

// A /run/user/<uid> open to others, or a symlink planted there, is passed
// over: the temporary directory (checked by prepare) is used instead.
func TestDirPassesOverARunUserDirectoryThatIsNotPrivate(t *testing.T) {
	run, tmp := withBases(t)
	mine := filepath.Join(run, strconv.Itoa(os.Getuid()))
	want := filepath.Join(tmp, "toolwarden-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(mine, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(mine, 0o777); err != nil {
		t.Fatal(err)
	}
	if got, err := Dir(); err != nil || got != want {
		t.Errorf("open to others: Dir() = %q, %v; want %q", got, err, want)
	}
	if err := os.Remove(mine); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, mine); err != nil {
		t.Fatal(err)
	}
	if got, err := Dir(); err != nil || got != want {
		t.Errorf("symlink: Dir() = %q, %v; want %q", got, err, want)
	}
}

// Only root can hand a directory to another user, so this part needs root.
func TestDirPassesOverARunUserDirectoryOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a directory another user's needs root")
	}
	run, tmp := withBases(t)
	mine := filepath.Join(run, strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(mine, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(mine, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(tmp, "toolwarden-"+strconv.Itoa(os.Getuid()))
	if got, err := Dir(); err != nil || got != want {
		t.Errorf("Dir() = %q, %v; want %q", got, err, want)
	}
}
