package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// sqliteHeader opens every SQLite 3 database file.
const sqliteHeader = "SQLite format 3\x00"

// openSQLite opens (creating when absent) the database file at path. A
// file that exists is first checked read-only — its header, a quick
// integrity check and its schema version — so that a damaged file, or one
// a newer toolwarden migrated, is refused with not one byte written.
func (s *Store) openSQLite(ctx context.Context, path string) error {
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		return fmt.Errorf("store %s: a SQLite store is a file path (an in-memory database would share nothing)", s.url)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("store %s: %w", s.url, err)
	}
	existed, err := s.prepareFile(abs)
	if err != nil {
		return err
	}
	if existed {
		if err := s.checkExisting(ctx, abs); err != nil {
			return err
		}
	}
	db, err := sql.Open(sqliteDriver, sqliteDSN(abs, s.opts.BusyTimeout.Milliseconds(), false))
	if err != nil {
		return fmt.Errorf("store %s: %w", s.url, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	s.db = db
	if err := s.setWAL(ctx); err != nil {
		_ = db.Close()
		return err
	}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return s.classify(err)
	}
	return nil
}

// prepareFile makes the directory (0700) and the file (0600) when absent:
// the store holds who may run what, readable by its owner only. SQLite
// gives its -wal and -shm files the database file's mode. It reports
// whether the file held anything already (an empty file is a new
// database to SQLite).
func (s *Store) prepareFile(path string) (existed bool, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return false, fmt.Errorf("store %s: make its directory: %w", s.url, err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("store %s: %w", s.url, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, fmt.Errorf("store %s: %w", s.url, err)
	}
	if !fi.Mode().IsRegular() {
		return false, fmt.Errorf("store %s: %s is not a regular file", s.url, path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		s.log.Warn("the store's file is readable by others than its owner; chmod 600 it",
			"store", s.url, "mode", fi.Mode().Perm().String())
	}
	if fi.Size() == 0 {
		return false, nil
	}
	return true, checkHeader(f, fi.Size(), s.url, path)
}

// checkHeader refuses a file that is not a SQLite database before any
// driver opens it (a driver could otherwise take it for a new database
// and write one over it).
func checkHeader(f io.Reader, size int64, url, path string) error {
	var head [100]byte
	if size < int64(len(head)) {
		return corrupt(url, path, fmt.Sprintf("it is %d bytes long, shorter than a SQLite header, so it is not a SQLite database", size), nil)
	}
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return fmt.Errorf("store %s: read %s: %w", url, path, err)
	}
	if !bytes.HasPrefix(head[:], []byte(sqliteHeader)) {
		return corrupt(url, path, "it does not begin with the SQLite header, so it is not a SQLite database", nil)
	}
	return nil
}

// checkExisting reads, on a read-only connection, that the pages are
// sound (quick_check) and that the schema is one this binary knows.
func (s *Store) checkExisting(ctx context.Context, path string) error {
	db, err := sql.Open(sqliteDriver, sqliteDSN(path, s.opts.BusyTimeout.Milliseconds(), true))
	if err != nil {
		return fmt.Errorf("store %s: %w", s.url, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	s.db = db // schemaVersion and classify read through s
	defer func() { s.db = nil }()
	if err := s.quickCheck(ctx, db, path); err != nil {
		return err
	}
	v, err := s.schemaVersion(ctx, db)
	if err != nil {
		return err
	}
	if v > latestVersion() {
		return s.newerSchema(v)
	}
	return nil
}

func (s *Store) quickCheck(ctx context.Context, db *sql.DB, path string) error {
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return s.classify(fmt.Errorf("integrity check: %w", err))
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return s.classify(fmt.Errorf("integrity check: %w", err))
		}
		if line != "ok" && len(problems) < 3 {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return s.classify(fmt.Errorf("integrity check: %w", err))
	}
	if len(problems) > 0 {
		return corrupt(s.url, path, "SQLite's integrity check found damaged pages: "+strings.Join(problems, "; "), nil)
	}
	return nil
}

// setWAL switches the file to write-ahead logging (persistent in the
// file): readers never wait for the writer, and a crash mid-write leaves
// the last committed state.
func (s *Store) setWAL(ctx context.Context) error {
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return s.classify(fmt.Errorf("read the journal mode: %w", err))
	}
	if strings.EqualFold(mode, "wal") {
		return nil // the usual case: nothing to write
	}
	// The switch needs the file to itself, and SQLite does not always wait
	// for a lock upgrade: wait here, up to the busy timeout, as for a write.
	deadline := time.Now().Add(s.opts.BusyTimeout)
	for {
		err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
		if err == nil {
			break
		}
		if !sqliteBusy(err) || time.Now().After(deadline) {
			return s.classify(fmt.Errorf("switch to WAL: %w", err))
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("store %s: SQLite kept journal mode %q instead of WAL (is the file on a network file system?)", s.url, mode)
	}
	return nil
}

// sqliteDSN is the driver's name for path. Every connection waits up to
// busyMS for another's write lock, and writes with synchronous=FULL: in
// WAL mode NORMAL can lose the last commits on power loss, and a lost
// commit here could be a revocation — a grant coming back to life. Every
// transaction begins IMMEDIATE (see inTx).
func sqliteDSN(path string, busyMS int64, readOnly bool) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	q := "_pragma=busy_timeout(" + strconv.FormatInt(busyMS, 10) + ")"
	if readOnly {
		return "file:" + esc + "?mode=ro&" + q
	}
	return "file:" + esc + "?" + q + "&_pragma=synchronous(FULL)&_txlock=immediate"
}

// classify turns a SQLite failure that means the file is unusable into
// ErrLocked or ErrCorrupt with what to do, and names the store in any
// other.
func (s *Store) classify(err error) error {
	if err == nil || errors.Is(err, ErrNewerSchema) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrLocked) {
		return err
	}
	if s.engine != EngineSQLite {
		return err
	}
	switch {
	case sqliteBusy(err):
		return fmt.Errorf("store %s: %w: another process holds its write lock and kept it past the busy timeout (%s); "+
			"the file was left untouched: stop the other process (another toolwarden on this file?) or name another file with --store (%w)",
			s.url, ErrLocked, s.opts.BusyTimeout, err)
	case sqliteCorrupt(err):
		return corrupt(s.url, strings.TrimPrefix(s.url, "sqlite:"), "SQLite reports it damaged", err)
	}
	if strings.HasPrefix(err.Error(), "store ") {
		return err
	}
	return fmt.Errorf("store %s: %w", s.url, err)
}

func corrupt(url, path, why string, cause error) error {
	msg := fmt.Sprintf("store %s: %%w: %s: %s; it was left untouched: restore it from a backup, "+
		"or move it aside and start with an empty store (toolwarden never overwrites it)", url, path, why)
	if cause != nil {
		return fmt.Errorf(msg+" (%w)", ErrCorrupt, cause)
	}
	return fmt.Errorf(msg, ErrCorrupt)
}
