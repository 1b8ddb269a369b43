package host_test

import (
	"context"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
)

// BenchmarkNewFromDiskCache is what a hook process pays to load a policy
// plugin before it can decide: host.New with argguard, its compiled code
// already in the disk cache (filled before the timer starts), then one
// Check and Close. "none" is the same host without the plugin.
func BenchmarkNewFromDiskCache(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct{ name, policies string }{
		{"none", ""},
		{"argguard", "\n[policies.argguard]\nbuiltin = \"argguard\"\n" + `config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }]` + "\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg, err := config.LoadBytes("start.toml", []byte(benchConfig+c.policies))
			if err != nil {
				b.Fatal(err)
			}
			s := host.Defaults().WithPluginCacheDir(b.TempDir())
			tl := tool(b, writeFile)
			call := host.Call{Session: "s", Server: "fs", Tool: tl, Arguments: []byte(`{"path":"/etc/passwd"}`)}
			warm, err := host.New(ctx, cfg, s) // fills the disk cache
			if err != nil {
				b.Fatal(err)
			}
			warm.Close(ctx)
			b.ResetTimer()
			for range b.N {
				h, err := host.New(ctx, cfg, s)
				if err != nil {
					b.Fatal(err)
				}
				h.Check(ctx, call)
				h.Close(ctx)
			}
		})
	}
}
