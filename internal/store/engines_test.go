package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/store/pgtest"
)

// One Postgres cluster serves the whole test binary (CI's two cores are
// shared); each test gets its own database on it.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// engine is one engine every store test runs against: url makes a fresh,
// empty store for the test.
type engine struct {
	name string
	url  func(t *testing.T) string
}

// engines is the table every store test ranges over. Postgres skips when
// it is not installed, and fails under TOOLWARDEN_REQUIRE_TOOLCHAINS=1.
var engines = []engine{
	{EngineSQLite, func(t *testing.T) string {
		return "sqlite:" + filepath.Join(t.TempDir(), "store.db")
	}},
	{EnginePostgres, func(t *testing.T) string { return pgtest.Shared(t).URL }},
}

// forEachEngine runs f as a subtest per engine with a fresh store's URL.
func forEachEngine(t *testing.T, f func(t *testing.T, url string)) {
	t.Helper()
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { f(t, e.url(t)) })
	}
}

// openTest opens url for the test and closes it when the test ends.
func openTest(t testing.TB, url string, o Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, o)
	if err != nil {
		t.Fatalf("Open(%s): %v", Redact(url), err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}
