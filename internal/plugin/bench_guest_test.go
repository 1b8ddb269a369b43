package plugin

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// Guest cost, as ratios inside one run (docs/performance.md, "Guest
// cost"). BenchmarkGuestRatios runs every variant in interleaved rounds and
// reports, per variant, the median ns of one guest call and the median of
// same-round ratios:
//
//   anchor-empty       the anchor C guest (testdata/guestanchor) on `{}`:
//                      the full ABI round trip (input_read, output_write,
//                      output parse) with nothing to scan
//   anchor-<plugin>    the anchor scanning the exact envelope bytes the
//                      plugin's check gets
//   <plugin>           the shipped plugin's check on those bytes
//   <plugin>-noinstr   the same module compiled without the deadline
//                      instrumentation (and no timer): what the checks cost
//   <plugin>-Check     Plugin.Check: the envelope built, then the guest
//
// Every guest variant is one instance's check on pre-built bytes: no
// envelope building, the same host path (instance.check) for all.
//
//	go test -run '^$' -bench BenchmarkGuestRatios -benchtime 2000x ./internal/plugin/

// anchorWasm builds the anchor guest with clang, as the anchor was built.
func anchorWasm(b testing.TB) string {
	cc := requireTool(b, "clang")
	out := filepath.Join(b.TempDir(), "anchor.wasm")
	cmd := exec.Command(cc, "--target=wasm32", "-O2", "-nostdlib", "-Wl,--no-entry", "-Wl,--strip-all",
		"-o", out, "testdata/guestanchor/anchor.c")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building the anchor guest: %v\n%s", err, msg)
	}
	return out
}

// guestVariant is one measured thing: a call that returns a verdict.
type guestVariant struct {
	name string
	call func() policy.PluginVerdict
	want policy.Verdict
}

// held takes one of p's instances for the benchmark (a PoolSize 1 plugin
// has no other).
func held(b testing.TB, p *Plugin) *instance {
	in, f := p.acquire(context.Background())
	if f != nil {
		b.Fatal(f)
	}
	b.Cleanup(func() { p.release(in, nil) })
	return in
}

// onBytes is in's check of env.
func onBytes(in *instance, env []byte) func() policy.PluginVerdict {
	env = slices.Clone(env)
	return func() policy.PluginVerdict {
		v, f := in.check(context.Background(), env)
		if f != nil {
			return policy.PluginVerdict{Err: f}
		}
		return v
	}
}

// envelopeOf is the check envelope p's instances get for c.
func envelopeOf(b testing.TB, p *Plugin, c *policy.CheckInput) []byte {
	in, f := p.acquire(context.Background())
	if f != nil {
		b.Fatal(f)
	}
	defer p.release(in, nil)
	return in.appendCheck(nil, c)
}

// guestPlugins are the first-party plugins with the calls they are
// measured on.
var guestPlugins = []struct {
	name string
	cfg  map[string]any
	call func() *policy.CheckInput
	want policy.Verdict
}{
	{"trifecta", nil, trifectaCall, policy.Ask},
	{"argguard", argguardConfig, argguardCall, policy.Ask},
	{"secrets", nil, secretsCall, policy.Abstain},
}

// secretsCall is a call whose arguments hold no secret: secrets scans them
// all.
func secretsCall() *policy.CheckInput {
	return checkInput(`{"to":"someone@example.com","subject":"notes","body":"see the attached build log; nothing to worry about"}`)
}

func guestVariants(b testing.TB) []guestVariant {
	ctx := context.Background()
	rt := newRuntime(b, Options{PoolSize: 1, noReuse: true})
	bare := newRuntime(b, Options{PoolSize: 1, noDeadlines: true, noReuse: true})
	anchorPath := anchorWasm(b)
	// Long deadlines: a shared machine's stall must not fail a benchmark.
	anchor, err := Load(ctx, rt, &config.Policy{Name: "anchor", Wasm: anchorPath, TimeoutMs: 60000}, nil)
	if err != nil {
		b.Fatal(err)
	}
	anchorIn := held(b, anchor)
	vs := []guestVariant{{"anchor-empty", onBytes(anchorIn, []byte(`{}`)), policy.Deny}}
	for _, g := range guestPlugins {
		load := func(rt *Runtime) *Plugin {
			p, err := Load(ctx, rt, &config.Policy{Name: g.name, Builtin: g.name, Config: g.cfg, TimeoutMs: 60000}, nil)
			if err != nil {
				b.Fatal(err)
			}
			return p
		}
		p, pb := load(rt), load(bare)
		pc := load(rt) // its own pool: onBytes keeps p's one instance
		c := g.call()
		env := envelopeOf(b, p, c)
		vs = append(vs,
			guestVariant{"anchor-" + g.name, onBytes(anchorIn, env), policy.Deny},
			guestVariant{g.name, onBytes(held(b, p), env), g.want},
			guestVariant{g.name + "-noinstr", onBytes(held(b, pb), env), g.want},
			guestVariant{g.name + "-Check", func() policy.PluginVerdict { return pc.Check(ctx, c) }, g.want},
		)
	}
	return vs
}

// TestGuestBenchmarkVariantsDecide runs every variant of
// BenchmarkGuestRatios once: every plugin gives its verdict, with and
// without instrumentation, and the anchor really scans: its reason is
// destructive_disabled only when its scanner walked the whole envelope to
// its closing brace (a cut envelope is bad_input).
func TestGuestBenchmarkVariantsDecide(t *testing.T) {
	for _, v := range guestVariants(t) {
		got := v.call()
		if got.Verdict != v.want || got.Err != nil {
			t.Errorf("%s: %s (%v), want %s", v.name, got.Verdict, got.Err, v.want)
		}
		if strings.HasPrefix(v.name, "anchor-") && got.Reason != "destructive_disabled" {
			t.Errorf("%s: reason %q, want destructive_disabled", v.name, got.Reason)
		}
	}
	rt := newRuntime(t, Options{PoolSize: 1})
	anchor, err := Load(context.Background(), rt, &config.Policy{Name: "anchor", Wasm: anchorWasm(t)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := loadBuiltin(t, rt, "trifecta", nil)
	env := envelopeOf(t, p, trifectaCall())
	if got := onBytes(held(t, anchor), env[:len(env)-1])(); got.Reason != "bad_input" {
		t.Errorf("the anchor on a cut envelope: %s %q, want bad_input", got.Verdict, got.Reason)
	}
}

func BenchmarkGuestRatios(b *testing.B) {
	vs := guestVariants(b)
	for _, v := range vs {
		for i := 0; i < 20000; i++ { // steady guest heaps
			v.call()
		}
	}
	const rounds = 9
	ns := make([][]float64, len(vs)) // [variant][round]
	b.ResetTimer()
	for r := 0; r < rounds; r++ {
		for i, v := range vs {
			start := time.Now()
			for n := 0; n < b.N; n++ {
				if got := v.call(); got.Verdict != v.want {
					b.Fatalf("%s: %s (%v)", v.name, got.Verdict, got.Err)
				}
			}
			ns[i] = append(ns[i], float64(time.Since(start).Nanoseconds())/float64(b.N))
		}
	}
	b.StopTimer()
	idx := map[string]int{}
	for i, v := range vs {
		idx[v.name] = i
		b.ReportMetric(median(ns[i]), v.name+"-ns")
	}
	ratio := func(a, c string) float64 {
		rs := make([]float64, rounds)
		for r := range rs {
			rs[r] = ns[idx[a]][r] / ns[idx[c]][r]
		}
		return median(rs)
	}
	for _, g := range guestPlugins {
		b.ReportMetric(ratio(g.name, "anchor-"+g.name), g.name+"/anchor")
		b.ReportMetric(ratio(g.name, g.name+"-noinstr"), g.name+"/noinstr")
		b.ReportMetric(ratio(g.name+"-Check", g.name), g.name+"-Check/guest")
	}
	b.ReportMetric(ratio("anchor-trifecta", "anchor-empty"), "anchor-scan/empty")
	b.ReportMetric(0, "ns/op") // the op is a round of every variant; see the metrics
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
