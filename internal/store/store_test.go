package store

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestOpenCreatesSchemaV1AndReopensWithoutMigratingAgain(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		ctx := context.Background()
		for i := 0; i < 2; i++ {
			s := openTest(t, url, Options{})
			v, err := s.schemaVersion(ctx, s.db)
			if err != nil || v != latestVersion() {
				t.Fatalf("open %d: schema version %d, %v; want %d", i, v, err, latestVersion())
			}
			var n int
			if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM tw_migrations").Scan(&n); err != nil || n != 1 {
				t.Fatalf("open %d: %d migration rows, %v; want 1", i, n, err)
			}
			var rev int64
			if err := s.db.QueryRowContext(ctx, "SELECT rev FROM tw_revision WHERE id = 1").Scan(&rev); err != nil || rev != 0 {
				t.Fatalf("open %d: revision %d, %v; want 0", i, rev, err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// The contract's schema v1, table by table: every column a query names.
var schemaV1 = map[string]string{
	"tw_migrations":     "version, name, applied_at",
	"tw_revision":       "id, rev",
	"tw_grants":         "id, app, server, connector, tool, hash, scope_kind, scope_name, args_digest, args_preview, granted_by, granted_at, revoked_at, revoked_by, rev",
	"tw_sessions":       "id, state, rev, updated_at",
	"tw_request_states": "nonce, expires_at, parts",
	"tw_asks":           "id, session, principal, ask, approvers, replica, created_at, expires_at, answer, answered_by, answered_at, grant_scope, withdrawn_at",
	"tw_audit":          "id, at, replica, session, event, record",
}

func TestSchemaV1HasTheContractsTablesAndOneRevisionRow(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		ctx := context.Background()
		s := openTest(t, url, Options{})
		for table, cols := range schemaV1 {
			rows, err := s.db.QueryContext(ctx, "SELECT "+cols+" FROM "+table+" WHERE 1 = 0")
			if err != nil {
				t.Errorf("%s (%s): %v", table, cols, err)
				continue
			}
			got, _ := rows.Columns()
			rows.Close()
			if len(got) != len(strings.Split(cols, ",")) {
				t.Errorf("%s: columns %v", table, got)
			}
		}
		// tw_revision holds exactly one row, id 1: a second is refused.
		if _, err := s.db.ExecContext(ctx, "INSERT INTO tw_revision (id, rev) VALUES (2, 0)"); err == nil {
			t.Error("tw_revision took a second row")
		}
		// Times are BIGINT nanoseconds: a 2026 time fits on both engines.
		at := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC).UnixNano()
		if _, err := s.db.ExecContext(ctx, s.rebind("INSERT INTO tw_audit (id, at, replica, session, event, record) VALUES (?, ?, 'r', 's', 'e', '{}')"), newID(), at); err != nil {
			t.Fatal(err)
		}
		var back int64
		if err := s.db.QueryRowContext(ctx, "SELECT at FROM tw_audit").Scan(&back); err != nil || back != at {
			t.Errorf("at read back %d, %v; want %d", back, err, at)
		}
	})
}
