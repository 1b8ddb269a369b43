package store

import (
	"context"
	"testing"
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
