package host_test

import (
	"os"
	"testing"

	"github.com/toolwarden/toolwarden/internal/store/pgtest"
)

// pluginCache is shared by the package's tests so that each first-party
// plugin is compiled once per run (a Go guest takes seconds under -race).
var pluginCache string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolwarden-host-test-")
	if err != nil {
		panic(err)
	}
	pluginCache = dir
	code := pgtest.Main(m) // the store tests' one Postgres cluster (store_test.go)
	os.RemoveAll(dir)
	os.Exit(code)
}
