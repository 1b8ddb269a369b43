package secrets

import (
	"testing"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// testConfig parses a config as the plugin's Configure does.
func testConfig(t testing.TB, cfg string) *config {
	t.Helper()
	v, ok := pdk.ParseValue([]byte(cfg))
	if !ok {
		t.Fatalf("config %s is not JSON", cfg)
	}
	c := &config{}
	if err := c.parse(v); err != nil {
		t.Fatalf("config %s: %v", cfg, err)
	}
	return c
}
