package plugin

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// BenchmarkInterruptStrategy is what this build's way of stopping guests
// (deadline_flag.go or deadline_wazero.go) costs an event: guestloop is
// 10,000 loop iterations with a call in each, noop the host's floor. Its
// figures mean something only beside the other build's, from the same
// run (docs/plugins.md, "Two ways to stop a guest"):
//
//	go test -c -o flag.test ./internal/plugin/
//	go test -c -tags toolwarden_wazero_interrupt -o wazero.test ./internal/plugin/
//	for i in 1 2 3; do for t in flag wazero; do ./$t.test -test.run '^$' -test.bench InterruptStrategy; done; done
func BenchmarkInterruptStrategy(b *testing.B) {
	rt := newRuntime(b, Options{PoolSize: 1, noReuse: true})
	in := checkInput(`{"path":"/tmp/x"}`)
	for _, name := range []string{"guestloop", "noop"} {
		b.Run(interruptStrategy+"/"+name, func(b *testing.B) {
			abs, _ := filepath.Abs(filepath.Join("testdata", "wat", name+".wasm"))
			p, err := Load(context.Background(), rt, &config.Policy{Name: name, Wasm: abs}, nil)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < 100; i++ {
				p.Check(context.Background(), in)
			}
			benchCheck(b, policy.Abstain, func() policy.PluginVerdict { return p.Check(context.Background(), in) })
		})
	}
}
