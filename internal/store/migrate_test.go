package store

import (
	"context"
	"strings"
	"sync"
	"testing"
)

func TestEmbeddedMigrationsAreNumberedFromOneAndSplitIntoStatements(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].version != 1 || ms[0].name != "initial" {
		t.Fatalf("migrations = %+v; want 0001_initial first", ms)
	}
	for _, m := range ms {
		for _, st := range m.stmts {
			if strings.Contains(st, "--") || strings.Contains(st, ";") || st == "" {
				t.Errorf("migration %d: statement %q was not split cleanly", m.version, st)
			}
		}
	}
}

func TestOpensRacingOnANewDatabaseApplyEachMigrationOnce(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		const racers = 6
		ctx := context.Background()
		var wg sync.WaitGroup
		stores := make([]*Store, racers)
		errs := make([]error, racers)
		start := make(chan struct{})
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				stores[i], errs[i] = Open(ctx, url, Options{})
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Open %d of %d at once: %v", i, racers, err)
			}
			defer stores[i].Close()
		}
		s := stores[0]
		var migrations, revisions int
		if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM tw_migrations").Scan(&migrations); err != nil {
			t.Fatal(err)
		}
		if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM tw_revision").Scan(&revisions); err != nil {
			t.Fatal(err)
		}
		if migrations != int(latestVersion()) || revisions != 1 {
			t.Errorf("%d migration rows and %d revision rows; want %d and 1", migrations, revisions, latestVersion())
		}
	})
}
