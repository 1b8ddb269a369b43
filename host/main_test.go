package host_test

import (
	"os"
	"testing"
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
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
