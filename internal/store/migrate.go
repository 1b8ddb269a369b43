package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one embedded schema step, NNNN_name.sql.
type migration struct {
	version int64
	name    string
	stmts   []string
}

// migrations returns the embedded steps in order. Their files are
// checked by a test, so a malformed name fails the build's tests, not a
// user's Open.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var ms []migration
	for _, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".sql")
		num, name, ok := strings.Cut(base, "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || v != int64(len(ms)+1) {
			return nil, fmt.Errorf("migration %s: want NNNN_name.sql numbered %d", n, len(ms)+1)
		}
		body, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, stmts: splitSQL(string(body))})
	}
	return ms, nil
}

// latestVersion is the newest schema this binary knows.
func latestVersion() int64 {
	ms, _ := migrations()
	return int64(len(ms))
}

// splitSQL cuts a migration into statements: `--` comments dropped, split
// at semicolons. Drivers differ on running several statements in one Exec;
// one at a time is portable. Migrations hold no string containing ; or --.
func splitSQL(body string) []string {
	var b strings.Builder
	for _, line := range strings.Split(body, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line + "\n")
	}
	var out []string
	for _, st := range strings.Split(b.String(), ";") {
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, st)
		}
	}
	return out
}

// migrate applies the steps the database lacks, each in its own
// transaction that first takes the migration lock (Postgres: an advisory
// transaction lock; SQLite: BEGIN IMMEDIATE's write lock) and then
// re-reads what is applied, so processes opening one database at once
// apply each step exactly once. A database at a newer version than this
// binary knows is refused before anything is written.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := s.inTx(ctx, func(tx *sql.Tx) error { return s.applyOne(ctx, tx, m, len(ms)) }); err != nil {
			return err
		}
	}
	return nil
}

// migrationLockKey is the Postgres advisory lock migrations take: a fixed
// number ("tw" and a date), so every toolwarden takes the same one.
const migrationLockKey = 0x7477_2026_0025

func (s *Store) applyOne(ctx context.Context, tx *sql.Tx, m migration, known int) error {
	if s.engine == EnginePostgres {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrationLockKey)); err != nil {
			return fmt.Errorf("store %s: take the migration lock: %w", s.url, err)
		}
	}
	current, err := s.schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	if current > int64(known) {
		return s.newerSchema(current)
	}
	if current >= m.version {
		return nil
	}
	for _, st := range m.stmts {
		if _, err := tx.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("store %s: migration %d (%s): %w", s.url, m.version, m.name, err)
		}
	}
	_, err = tx.ExecContext(ctx, s.rebind("INSERT INTO tw_migrations (version, name, applied_at) VALUES (?, ?, ?)"),
		m.version, m.name, s.now().UnixNano())
	if err != nil {
		return fmt.Errorf("store %s: record migration %d: %w", s.url, m.version, err)
	}
	return nil
}

// querier is what schemaVersion reads through: a transaction or a pool.
type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

// schemaVersion is the newest applied migration, 0 for an empty database.
func (s *Store) schemaVersion(ctx context.Context, q querier) (int64, error) {
	exists := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'tw_migrations'"
	if s.engine == EnginePostgres {
		exists = "SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE tablename = 'tw_migrations' AND schemaname = current_schema()"
	}
	var n int
	if err := q.QueryRowContext(ctx, exists).Scan(&n); err != nil {
		return 0, s.classify(fmt.Errorf("read the schema version: %w", err))
	}
	if n == 0 {
		return 0, nil
	}
	var v sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT MAX(version) FROM tw_migrations").Scan(&v); err != nil {
		return 0, s.classify(fmt.Errorf("read the schema version: %w", err))
	}
	return v.Int64, nil
}

func (s *Store) newerSchema(v int64) error {
	return fmt.Errorf("store %s: %w: it is at version %d and this toolwarden knows up to %d; "+
		"it was left untouched: run the newer toolwarden that migrated it (downgrades are not supported), "+
		"or restore the backup taken before the upgrade", s.url, ErrNewerSchema, v, latestVersion())
}
