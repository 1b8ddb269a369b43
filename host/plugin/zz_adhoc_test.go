package plugin

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/host/policy"
)

func BenchmarkAdhoc(b *testing.B) {
	for _, f := range strings.Split(os.Getenv("WASMS"), ",") {
		for _, nd := range []bool{false, true} {
			name := f
			if nd {
				name += "-nodeadline"
			}
			b.Run(name, func(b *testing.B) {
				rt := newRuntime(b, Options{PoolSize: 1, noDeadlines: nd})
				var cfg map[string]any
				if strings.Contains(f, "example") {
					cfg = map[string]any{"blocked_tool": "x"}
				}
				p, err := FromBytes(context.Background(), rt, &config.Policy{Name: "t", Config: cfg}, readFile(b, f))
				if err != nil {
					b.Fatal(err)
				}
				in := trifectaCall()
				in.Labels = append(in.Labels, "tainted")
				want := policy.Ask
				if strings.Contains(f, "noop") {
					want = policy.Abstain
				}
				warm(p, in)
				benchCheck(b, want, func() policy.PluginVerdict { return p.Check(context.Background(), in) })
			})
		}
	}
}
