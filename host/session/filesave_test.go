package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolwarden/toolwarden/host/session"
)

// inode tells a file replaced by Save (a rename) from the same file.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// A session file is rewritten only when the state changed, and always when
// what it holds is not that state (a corrupt file).
func TestSaveRewritesTheSessionFileOnlyWhenItsStateChanged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s1.json")
	event := func(change func(*session.Session)) {
		t.Helper()
		st := session.NewStore(nil)
		s, lock, err := st.OpenFile(dir, "s1")
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Close()
		if change != nil {
			change(s)
		}
		if err := lock.Save(s); err != nil {
			t.Fatal(err)
		}
	}
	event(func(s *session.Session) { s.Pin("fs", "read", "h1") })
	first := inode(t, path)
	event(nil)
	event(func(s *session.Session) { s.Pin("fs", "read", "h1") }) // pinned already
	if inode(t, path) != first {
		t.Fatal("an event that changed nothing rewrote the session file")
	}
	event(func(s *session.Session) { s.Pin("fs", "write", "h2") })
	second := inode(t, path)
	if second == first {
		t.Fatal("a new pin was not written")
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), `"write"`) {
		t.Fatalf("file: %s", data)
	}
	if err := os.WriteFile(path, []byte(`{"version":1,"pins":`), 0o600); err != nil {
		t.Fatal(err)
	}
	event(nil)
	if data, _ := os.ReadFile(path); strings.Contains(string(data), `"pins":`+"\n") || !strings.HasSuffix(strings.TrimSpace(string(data)), "}") {
		t.Fatalf("a corrupt file was kept: %s", data)
	}
}
