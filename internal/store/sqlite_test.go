package store

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sqliteURL is a fresh SQLite store's URL in the test's temp dir.
func sqliteURL(t *testing.T) (url, path string) {
	path = filepath.Join(t.TempDir(), "state", "toolwarden", "store.db")
	return "sqlite:" + path, path
}

// filesOf snapshots a database file and its -wal and -shm companions
// (nil when absent), to prove a refused Open changed none of them.
func filesOf(t *testing.T, path string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		out[suffix] = b
	}
	return out
}

// assertUnchanged checks that the database file and any write-ahead log
// it had are byte for byte as before. A read-only look at a WAL database
// may add SQLite's companions: an empty -wal and the -shm index (which
// holds no data).
func assertUnchanged(t *testing.T, path string, before map[string][]byte) {
	t.Helper()
	after := filesOf(t, path)
	for suffix, b := range before {
		switch {
		case b == nil && after[suffix] == nil:
		case b == nil && suffix == "-shm":
		case b == nil && suffix == "-wal" && len(after[suffix]) == 0:
		case b == nil || after[suffix] == nil || !bytes.Equal(b, after[suffix]):
			t.Errorf("%s%s changed: %d bytes before (exists %v), %d after (exists %v)",
				path, suffix, len(b), b != nil, len(after[suffix]), after[suffix] != nil)
		}
	}
}

// assertRefusal checks that err is why, names the file, and says what to do.
func assertRefusal(t *testing.T, err, why error, path string, says ...string) {
	t.Helper()
	if !errors.Is(err, why) {
		t.Fatalf("Open = %v; want %v", err, why)
	}
	for _, s := range append([]string{path}, says...) {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

func TestSQLiteFilesAreTheOwnersAlone(t *testing.T) {
	url, path := sqliteURL(t)
	s := openTest(t, url, Options{})
	if err := s.inTx(context.Background(), func(tx *sql.Tx) error { _, err := s.bump(context.Background(), tx); return err }); err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{
		filepath.Dir(path): 0o700, filepath.Dir(filepath.Dir(path)): 0o700,
		path: 0o600, path + "-wal": 0o600, path + "-shm": 0o600,
	}
	for p, mode := range want {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s has mode %v; want %v", p, fi.Mode().Perm(), mode)
		}
	}
}

func TestSQLiteConnectionsUseWALAFullSyncAndTheBusyTimeout(t *testing.T) {
	url, _ := sqliteURL(t)
	s := openTest(t, url, Options{BusyTimeout: 1234 * time.Millisecond})
	ctx := context.Background()
	// Hold several connections at once so that each is a fresh one.
	var conns []*sql.Conn
	for i := 0; i < 3; i++ {
		c, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "busy_timeout": "1234"} {
			var got string
			if err := c.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&got); err != nil || got != want {
				t.Errorf("connection %d: PRAGMA %s = %q, %v; want %q", i, pragma, got, err, want)
			}
		}
		c.Close()
	}
}

func TestAFileThatIsNotADatabaseIsRefusedAndLeftUntouched(t *testing.T) {
	for name, content := range map[string][]byte{
		"short text": []byte("not a database, and shorter than a SQLite header\n"),
		"long text":  bytes.Repeat([]byte("grants = [] # a config file, not a store\n"), 100),
		"zeros":      make([]byte, 8192),
	} {
		t.Run(name, func(t *testing.T) {
			url, path := sqliteURL(t)
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			before := filesOf(t, path)
			_, err := Open(context.Background(), url, Options{})
			assertRefusal(t, err, ErrCorrupt, path, "so it is not a SQLite database", "left untouched", "restore it from a backup")
			assertUnchanged(t, path, before)
		})
	}
}

// damage overwrites page n (1-based) of the database at path, past the
// 100-byte header when n is 1.
func damage(t *testing.T, path string, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const pageSize = 4096
	off := (n-1)*pageSize + 100*btoi(n == 1)
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xA5}, pageSize-100), off); err != nil {
		t.Fatal(err)
	}
}

func btoi(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func TestADamagedDatabaseIsRefusedAndLeftUntouched(t *testing.T) {
	// The schema page is read by any query; a page deep in the audit
	// table by none that Open runs, so only the integrity check finds it.
	for _, where := range []string{"schema page", "audit page"} {
		t.Run(where, func(t *testing.T) {
			url, path := sqliteURL(t)
			s := openTest(t, url, Options{})
			pages := fillAudit(t, s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			page := int64(1)
			if where == "audit page" {
				page = pages - 2
			}
			damage(t, path, page)
			before := filesOf(t, path)
			_, err := Open(context.Background(), url, Options{})
			assertRefusal(t, err, ErrCorrupt, path, "left untouched", "restore it from a backup")
			assertUnchanged(t, path, before)
		})
	}
}

// fillAudit writes rows over many pages and returns the page count.
func fillAudit(t *testing.T, s *Store) int64 {
	t.Helper()
	ctx := context.Background()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for i := 0; i < 300; i++ {
			_, err := tx.ExecContext(ctx, "INSERT INTO tw_audit (id, at, replica, session, event, record) VALUES (?, ?, 'r', 's', 'call', ?)",
				newID(), i, strings.Repeat("x", 1000))
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var pages int64
	if err := s.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil || pages < 50 {
		t.Fatalf("page_count %d, %v", pages, err)
	}
	return pages
}

func TestADatabaseAtANewerSchemaIsRefusedAndLeftUntouched(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		ctx := context.Background()
		s := openTest(t, url, Options{})
		if _, err := s.db.ExecContext(ctx, "INSERT INTO tw_migrations (version, name, applied_at) VALUES (99, 'from the future', 1)"); err != nil {
			t.Fatal(err)
		}
		before := dumpMigrations(t, s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		var files map[string][]byte
		path := strings.TrimPrefix(url, "sqlite:")
		if s.Engine() == EngineSQLite {
			// As another tool may leave it: a rollback journal, which
			// Open's switch to WAL would rewrite if it got that far.
			setJournal(t, path, "DELETE")
			files = filesOf(t, path)
		}
		_, err := Open(ctx, url, Options{})
		assertRefusal(t, err, ErrNewerSchema, Redact(url), "version 99", "knows up to 1", "left untouched", "downgrades are not supported")
		if s.Engine() == EngineSQLite {
			assertUnchanged(t, path, files)
			return
		}
		// Postgres: read the table back through a connection of our own.
		db, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if after := dumpRows(t, db); after != before {
			t.Errorf("tw_migrations changed:\n%s\nbecame\n%s", before, after)
		}
	})
}

func dumpMigrations(t *testing.T, s *Store) string { return dumpRows(t, s.db) }

func dumpRows(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query("SELECT version, name, applied_at FROM tw_migrations ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var v, at int64
		var n string
		if err := rows.Scan(&v, &n, &at); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%d %s %d\n", v, n, at)
	}
	return b.String()
}

// holdLockEnv makes the test binary, run again as a helper process, hold
// the write lock of the SQLite file it names until its stdin closes.
const holdLockEnv = "TOOLWARDEN_TEST_HOLD_SQLITE_LOCK"

func TestMain_holdSQLiteWriteLock(t *testing.T) {
	path := os.Getenv(holdLockEnv)
	if path == "" {
		t.Skip("a helper process for TestALockedDatabase..., not a test")
	}
	db, err := sql.Open(sqliteDriver, sqliteDSN(path, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin() // IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("UPDATE tw_revision SET rev = rev + 1"); err != nil {
		t.Fatal(err)
	}
	fmt.Println("holding")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = tx.Rollback()
}

// holdLockInAnotherProcess runs the helper above on path and returns when
// it holds the lock; release ends it.
func holdLockInAnotherProcess(t *testing.T, path string) (release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMain_holdSQLiteWriteLock$", "-test.v")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+path)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if !released {
			released = true
			stdin.Close()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(release)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if sc.Text() == "holding" {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return release
		}
	}
	t.Fatalf("the lock holder ended without holding the lock")
	return nil
}

func TestADatabaseLockedByAnotherProcessIsRefusedAndLeftUntouched(t *testing.T) {
	url, path := sqliteURL(t)
	s := openTest(t, url, Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Drop the file back to a rollback journal, as a file another tool
	// made would be: then even Open's switch to WAL needs the lock.
	for _, journal := range []string{"wal", "delete"} {
		t.Run(journal, func(t *testing.T) {
			if journal == "delete" {
				setJournal(t, path, "DELETE")
			}
			release := holdLockInAnotherProcess(t, path)
			before := filesOf(t, path)
			start := time.Now()
			_, err := Open(context.Background(), url, Options{BusyTimeout: 200 * time.Millisecond})
			assertRefusal(t, err, ErrLocked, path, "another process holds its write lock", "200ms", "left untouched", "stop the other process")
			if took := time.Since(start); took < 200*time.Millisecond {
				t.Errorf("Open gave up after %v, before the busy timeout", took)
			}
			assertUnchanged(t, path, before)
			release()
			// Once the other process is gone the same file opens.
			openTest(t, url, Options{}).Close()
		})
	}
}

func setJournal(t *testing.T, path, mode string) {
	t.Helper()
	db, err := sql.Open(sqliteDriver, sqliteDSN(path, 1000, false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("PRAGMA journal_mode=" + mode); err != nil {
		t.Fatal(err)
	}
}

func TestAnUnwritableStoreDirectoryIsAClearError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), "sqlite:"+filepath.Join(dir, "sub", "store.db"), Options{})
	if err == nil || !strings.Contains(err.Error(), "make its directory") {
		t.Fatalf("Open = %v; want an error saying the directory could not be made", err)
	}
}

func TestAWriteBlockedByAnotherProcessPastEveryRetryIsALockedError(t *testing.T) {
	url, path := sqliteURL(t)
	s := openTest(t, url, Options{BusyTimeout: 50 * time.Millisecond})
	release := holdLockInAnotherProcess(t, path)
	defer release()
	err := s.inTx(context.Background(), func(tx *sql.Tx) error { _, err := s.bump(context.Background(), tx); return err })
	assertRefusal(t, err, ErrLocked, path, "another process holds its write lock", "stop the other process")
}
