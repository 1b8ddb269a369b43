// Package testhost builds what a test of a front end needs from the engine:
// a configuration from TOML and a host over it, closed when the test ends.
// It is apart from package testkit because it imports the engine, which the
// engine's own tests cannot do.
//
//	h := testhost.New(t, "[apps.fs]\ndefault_tools_approval_mode = \"approve\"\n", host.Defaults())
package testhost

import (
	"context"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
)

// Config loads toml (over the embedded defaults) as the file "config.toml",
// failing the test when it does not load.
func Config(t testing.TB, toml string) *config.Config {
	t.Helper()
	cfg, err := config.LoadBytes("config.toml", []byte(toml))
	if err != nil {
		t.Fatalf("the test's config does not load: %v", err)
	}
	return cfg
}

// New builds a host from toml and settings s, failing the test when it
// cannot, and closes the host when the test ends.
func New(t testing.TB, toml string, s host.Settings) *host.Host {
	t.Helper()
	h, err := host.New(context.Background(), Config(t, toml), s)
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}
