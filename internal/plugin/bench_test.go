package plugin

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/plugins"
)

// Benchmarks put every first-party plugin call beside the noop module in
// the same run; docs/performance.md quotes them as ratios. Run with
// -benchmem.
//
//   wasm            Plugin.Check: envelope, one guest call under a deadline,
//                   output parse.
//   wasm-nodeadline the same without deadlines: the module as built, no
//                   timer (a measurement only; the host always enforces them).
//   noop            the same pipeline and the same input with the noop module
//                   (testdata/wat/noop.wasm: no output): what any plugin
//                   call costs, so wasm/noop is what the plugin's own work
//                   costs on top.
//   struct          the rule itself on already-decoded Go values (the floor).

// trifectaCall is the trifecta ask path: both labels, an exfiltrating tool.
func trifectaCall() *policy.CheckInput {
	in := checkInput(`{"to":"someone@example.com","subject":"notes","body":"see attached"}`,
		labelPrivate, labelUntrusted)
	in.Tool = &hints.Tool{Name: "send_mail", Title: "Send mail", HashHex: testTool.HashHex}
	in.Hints.Put(hints.OpenWorld, hints.True)
	return in
}

func argguardCall() *policy.CheckInput {
	return checkInput(`{"command":"cd /tmp && rm  -rf build","cwd":"/home/me/project"}`)
}

var argguardConfig = map[string]any{"rules": []any{
	map[string]any{"tool": "write_file", "arg": "path", "deny_glob": "/etc/**"},
	map[string]any{"tool": "*", "arg": "command", "ask_regex": `rm\s+-rf`},
}}

func loadBuiltin(b testing.TB, rt *Runtime, name string, cfg map[string]any) *Plugin {
	p, err := Load(context.Background(), rt, &config.Policy{Name: name, Builtin: name, Config: cfg}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// warm runs enough events for the guest heap to reach its steady size.
func warm(p *Plugin, in *policy.CheckInput) {
	for i := 0; i < 30000; i++ {
		p.Check(context.Background(), in)
	}
}

// noopPlugin is the noop module (no output: abstain) loaded in rt.
func noopPlugin(b testing.TB, rt *Runtime) *Plugin {
	p, err := loadWasm(b, rt, config.Policy{Name: "noop"}, filepath.Join("testdata", "wat", "noop.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func benchCheck(b *testing.B, want policy.Verdict, check func() policy.PluginVerdict) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := check(); v.Verdict != want {
			b.Fatalf("%+v", v)
		}
	}
}

func BenchmarkTrifectaCheck(b *testing.B) {
	rt := newRuntime(b, Options{PoolSize: 1})
	p := loadBuiltin(b, rt, "trifecta", nil)
	in := trifectaCall()
	ctx := context.Background()
	// wasm enters the guest for every check; wasm-reused is what a
	// repeated input costs, answered without the guest (deterministic.go).
	b.Run("wasm-reused", func(b *testing.B) {
		warm(p, in)
		benchCheck(b, policy.Ask, func() policy.PluginVerdict { return p.Check(ctx, in) })
	})
	p = loadBuiltin(b, newRuntime(b, Options{PoolSize: 1, noReuse: true}), "trifecta", nil)
	b.Run("wasm", func(b *testing.B) {
		warm(p, in)
		benchCheck(b, policy.Ask, func() policy.PluginVerdict { return p.Check(ctx, in) })
	})
	b.Run("wasm-nodeadline", func(b *testing.B) {
		p := loadBuiltin(b, newRuntime(b, Options{PoolSize: 1, noDeadlines: true, noReuse: true}), "trifecta", nil)
		warm(p, in)
		benchCheck(b, policy.Ask, func() policy.PluginVerdict { return p.Check(ctx, in) })
	})
	b.Run("noop", func(b *testing.B) {
		p := noopPlugin(b, newRuntime(b, Options{PoolSize: 1, noReuse: true}))
		warm(p, in)
		benchCheck(b, policy.Abstain, func() policy.PluginVerdict { return p.Check(ctx, in) })
	})
	b.Run("struct", func(b *testing.B) {
		v := policy.PluginVerdict{Verdict: policy.Ask, Code: codeTrifecta}
		benchCheck(b, policy.Ask, func() policy.PluginVerdict {
			if in.Caps.CanExfiltrate && slices.Contains(in.Labels, labelPrivate) && slices.Contains(in.Labels, labelUntrusted) {
				return v
			}
			return policy.PluginVerdict{}
		})
	})
}

func BenchmarkArgguardCheck(b *testing.B) {
	rt := newRuntime(b, Options{PoolSize: 1})
	p := loadBuiltin(b, rt, "argguard", argguardConfig)
	in := argguardCall()
	ctx := context.Background()
	// wasm enters the guest for every check; wasm-reused is what a
	// repeated input costs, answered without the guest (deterministic.go).
	b.Run("wasm-reused", func(b *testing.B) {
		warm(p, in)
		benchCheck(b, policy.Ask, func() policy.PluginVerdict { return p.Check(ctx, in) })
	})
	p = loadBuiltin(b, newRuntime(b, Options{PoolSize: 1, noReuse: true}), "argguard", argguardConfig)
	b.Run("wasm", func(b *testing.B) {
		warm(p, in)
		benchCheck(b, policy.Ask, func() policy.PluginVerdict { return p.Check(ctx, in) })
	})
	b.Run("wasm-nodeadline", func(b *testing.B) {
		p := loadBuiltin(b, newRuntime(b, Options{PoolSize: 1, noDeadlines: true, noReuse: true}), "argguard", argguardConfig)
		warm(p, in)
		benchCheck(b, policy.Ask, func() policy.PluginVerdict { return p.Check(ctx, in) })
	})
	b.Run("noop", func(b *testing.B) {
		p := noopPlugin(b, newRuntime(b, Options{PoolSize: 1, noReuse: true}))
		warm(p, in)
		benchCheck(b, policy.Abstain, func() policy.PluginVerdict { return p.Check(ctx, in) })
	})
}

// BenchmarkGuestFloor is what an event costs before any plugin logic: the
// noop WAT plugin (envelope, deadline, one call, no output) and the WAT
// conformance plugin (a C-class guest that parses its input).
func BenchmarkGuestFloor(b *testing.B) {
	runtimes := map[bool]*Runtime{
		false: newRuntime(b, Options{PoolSize: 1}),
		true:  newRuntime(b, Options{PoolSize: 1, noDeadlines: true}),
	}
	ctx := context.Background()
	in := trifectaCall()
	in.Labels = append(in.Labels, "tainted")
	for _, c := range []struct {
		name, file string
		want       policy.Verdict
	}{
		{"noop-wat", "testdata/wat/noop.wasm", policy.Abstain},
		{"example-wat", "../../pdk/testdata/conformance/example.wasm", policy.Ask},
	} {
		for _, nodeadline := range []bool{false, true} {
			name := c.name
			if nodeadline {
				name += "-nodeadline"
			}
			b.Run(name, func(b *testing.B) {
				abs, _ := filepath.Abs(c.file)
				p, err := Load(ctx, runtimes[nodeadline], &config.Policy{Name: c.name, Wasm: abs, Config: map[string]any{"blocked_tool": "x"}}, nil)
				if err != nil {
					b.Fatal(err)
				}
				warm(p, in)
				benchCheck(b, c.want, func() policy.PluginVerdict { return p.Check(ctx, in) })
			})
		}
	}
}

// BenchmarkDeadline is the per-event cost of arming and disarming a
// deadline (one timer per instance, left scheduled across events:
// deadline.go), beside reading the
// clock, the least a shared watchdog goroutine would need per event to
// know when an event started.
func BenchmarkDeadline(b *testing.B) {
	rt := newRuntime(b, Options{PoolSize: 1})
	p, err := loadWasm(b, rt, config.Policy{Name: "noop"}, filepath.Join("testdata", "wat", "noop.wasm"))
	if err != nil {
		b.Fatal(err)
	}
	in := p.pool.take()
	defer func() { p.pool.give(in) }()
	b.Run("timer", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			in.arm(time.Second)
			if in.disarm() {
				b.Fatal("fired")
			}
		}
	})
	b.Run("clock", func(b *testing.B) {
		b.ReportAllocs()
		var t time.Time
		for i := 0; i < b.N; i++ {
			t = time.Now()
		}
		_ = t
	})
}

// BenchmarkTrifectaCheckParallel runs BenchmarkTrifectaCheck from every
// core, beside the noop module; scaling is the serial ns/op over the
// parallel ns/op.
func BenchmarkTrifectaCheckParallel(b *testing.B) {
	rt := newRuntime(b, Options{noReuse: true})
	p := loadBuiltin(b, rt, "trifecta", nil)
	in := trifectaCall()
	ctx := context.Background()
	b.Run("wasm", func(b *testing.B) {
		warm(p, in)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if v := p.Check(ctx, in); v.Verdict != policy.Ask {
					b.Errorf("%+v", v)
					return
				}
			}
		})
	})
	b.Run("noop", func(b *testing.B) {
		p := noopPlugin(b, rt)
		warm(p, in)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if v := p.Check(ctx, in); v.Verdict != policy.Abstain {
					b.Errorf("%+v", v)
					return
				}
			}
		})
	})
}

// BenchmarkCompile is what loading a first-party plugin costs at startup:
// compiling it (cold) versus reading the compiled code from the disk cache
// (a restart), each in a fresh runtime.
func BenchmarkCompile(b *testing.B) {
	for _, name := range []string{"trifecta", "argguard"} {
		b.Run(name, func(b *testing.B) { benchCompile(b, name) })
	}
}

func benchCompile(b *testing.B, name string) {
	bin, _ := plugins.Builtin(name)
	ctx := context.Background()
	compile := func(b *testing.B, opts Options) {
		rt, err := NewRuntime(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := rt.compile(ctx, bin); err != nil {
			b.Fatal(err)
		}
		rt.Close(ctx)
	}
	b.Run("cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			compile(b, Options{NoDiskCache: true})
		}
	})
	b.Run("disk-cache", func(b *testing.B) {
		dir := b.TempDir()
		compile(b, Options{CacheDir: dir})
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			compile(b, Options{CacheDir: dir})
		}
	})
}
