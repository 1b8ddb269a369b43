package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolwarden/toolwarden/host"
)

// engine is one way to decide the call, measured serially or in parallel.
type engine struct {
	name     string
	parallel bool
	decide   func(ctx context.Context, goroutine int) string
	close    func()
}

// newEngines builds every engine once: OPA, Cedar, and each toolwarden
// variant; with parallel, also each under b.RunParallel.
func newEngines(tb testing.TB) []engine {
	tb.Helper()
	ctx := context.Background()
	o, err := NewOPA(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := NewCedar()
	if err != nil {
		tb.Fatal(err)
	}
	opa := func(ctx context.Context, _ int) string {
		d, err := o.Decide(ctx, Call)
		if err != nil {
			panic(err)
		}
		return d
	}
	ced := func(context.Context, int) string {
		d, err := c.Decide(Call)
		if err != nil {
			panic(err)
		}
		return d
	}
	es := []engine{{name: "opa", decide: opa}, {name: "cedar", decide: ced}}
	for _, v := range Variants {
		tw, err := NewToolwarden(ctx, v.Config, host.Defaults())
		if err != nil {
			tb.Fatalf("%s: %v", v.Name, err)
		}
		args := ArgsOf(Call)
		es = append(es, engine{name: "tw-" + v.Name, close: tw.Close,
			decide: func(ctx context.Context, _ int) string { return tw.Decide(ctx, "s", args) }})
	}
	// Both plugins on a call whose path changes every time (256 paths in
	// turn): argguard, whose input holds the arguments, is entered for
	// every call, where the engines above see the same call again and
	// deterministic plugins answer it without entering the guest.
	fresh, err := NewToolwarden(ctx, Variants[3].Config, host.Defaults())
	if err != nil {
		tb.Fatal(err)
	}
	freshArgs := make([]json.RawMessage, 256)
	for i := range freshArgs {
		freshArgs[i] = json.RawMessage(`{"path":"/home/me/src/notes-` + strconv.Itoa(i) + `.txt","content":"hello"}`)
	}
	next := 0
	es = append(es, engine{name: "tw-both-fresh", close: fresh.Close,
		decide: func(ctx context.Context, _ int) string {
			next = (next + 1) % len(freshArgs)
			return fresh.Decide(ctx, "s", freshArgs[next])
		}})
	// Parallel: the same engines from GOMAXPROCS goroutines; toolwarden
	// with both plugins, each goroutine its own session (a host serving
	// several clients).
	both, err := NewToolwarden(ctx, Variants[3].Config, host.Defaults())
	if err != nil {
		tb.Fatal(err)
	}
	sessions := make([]string, 64)
	for i := range sessions {
		sessions[i] = "p" + strconv.Itoa(i)
		both.Prime(ctx, sessions[i])
	}
	args := ArgsOf(Call)
	es = append(es,
		engine{name: "opa", parallel: true, decide: opa},
		engine{name: "cedar", parallel: true, decide: ced},
		engine{name: "tw-both", parallel: true, close: both.Close,
			decide: func(ctx context.Context, g int) string { return both.Decide(ctx, sessions[g%64], args) }},
	)
	tb.Cleanup(func() {
		for _, e := range es {
			if e.close != nil {
				e.close()
			}
		}
	})
	return es
}

func (e engine) label() string {
	if e.parallel {
		return e.name + "-parallel"
	}
	return e.name
}

// lastFailure says why a benchmark failed: testing.Benchmark, which
// TestReport uses, does not print a benchmark's own failure.
var lastFailure atomic.Value

// bench is e as a benchmark function.
func (e engine) bench(b *testing.B) {
	ctx := context.Background()
	for range 1000 { // warm instances and caches
		e.decide(ctx, 0)
	}
	b.ReportAllocs()
	if !e.parallel {
		b.ResetTimer()
		for range b.N {
			if d := e.decide(ctx, 0); d != "ask" {
				lastFailure.Store(e.label() + ": " + d + ", want ask")
				b.Fatalf("%s: %s, want ask", e.label(), d)
			}
		}
		return
	}
	var next atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		g := int(next.Add(1))
		for pb.Next() {
			if d := e.decide(ctx, g); d != "ask" {
				lastFailure.Store(e.label() + ": " + d + ", want ask")
				b.Errorf("%s: %s, want ask", e.label(), d)
				return
			}
		}
	})
}

// Every engine gives the same decision for the same call: ask on the
// destructive write, deny under /etc (where the rule can see it:
// toolwarden with argguard), allow on a read-only read.
func TestEnginesDecideTheSameCallAlike(t *testing.T) {
	ctx := context.Background()
	o, err := NewOPA(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCedar()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call []byte
		want string
	}{
		{"a destructive write is asked", Call, "ask"},
		{"a write under /etc is denied", DeniedCall, "deny"},
		{"a read-only read is allowed", SafeCall, "allow"},
		{"bytes that are not JSON are denied", []byte(`{"arguments":`), "deny"},
	} {
		if d, err := o.Decide(ctx, tc.call); err != nil || d != tc.want {
			t.Errorf("%s: opa says %s (%v), want %s", tc.name, d, err, tc.want)
		}
		if d, err := c.Decide(tc.call); err != nil || d != tc.want {
			t.Errorf("%s: cedar says %s (%v), want %s", tc.name, d, err, tc.want)
		}
	}
	for _, v := range Variants {
		tw, err := NewToolwarden(ctx, v.Config, host.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		defer tw.Close()
		if d := tw.Decide(ctx, "s", ArgsOf(Call)); d != "ask" {
			t.Errorf("tw-%s on the write: %s, want ask", v.Name, d)
		}
		want := "ask" // no rule of toolwarden's own reads paths
		if strings.Contains(v.Name, "argguard") || v.Name == "both" {
			want = "deny"
		}
		if d := tw.Decide(ctx, "s", ArgsOf(DeniedCall)); d != want {
			t.Errorf("tw-%s under /etc: %s, want %s", v.Name, d, want)
		}
	}
}

// BenchmarkPeers runs every engine once per count: with -count N the
// engines alternate within each round. TestReport computes the same-round
// ratios.
func BenchmarkPeers(b *testing.B) {
	for _, e := range newEngines(b) {
		b.Run(e.label(), e.bench)
	}
}

// TestReport runs TOOLWARDEN_PEERS_ROUNDS interleaved rounds (each round
// runs every engine once, for -test.benchtime) and prints the medians of
// the per-round ratios. Set TOOLWARDEN_PEERS_REPORT=1 to run it
// (scripts/bench-peers.sh does).
func TestReport(t *testing.T) {
	if os.Getenv("TOOLWARDEN_PEERS_REPORT") == "" {
		t.Skip("set TOOLWARDEN_PEERS_REPORT=1 (scripts/bench-peers.sh) to run the interleaved rounds")
	}
	rounds := 6
	if s := os.Getenv("TOOLWARDEN_PEERS_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("TOOLWARDEN_PEERS_ROUNDS=%q: want a positive number", s)
		}
		rounds = n
	}
	es := newEngines(t)
	ns := make(map[string][]float64)
	allocs := make(map[string]int64)
	for r := range rounds {
		for _, e := range es {
			res := testing.Benchmark(e.bench)
			if res.N == 0 {
				t.Fatalf("%s failed in round %d: %v", e.label(), r+1, lastFailure.Load())
			}
			ns[e.label()] = append(ns[e.label()], float64(res.T.Nanoseconds())/float64(res.N))
			allocs[e.label()] = res.AllocsPerOp()
		}
	}
	ratio := func(a, b string) float64 {
		rs := make([]float64, rounds)
		for i := range rounds {
			rs[i] = ns[a][i] / ns[b][i]
		}
		return median(rs)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d interleaved rounds, GOMAXPROCS-parallel where named; medians of same-round ratios\n\n", rounds)
	fmt.Fprintf(&sb, "| engine | ns/op (median) | allocs/op | x cedar | x opa | x tw-none |\n|---|---|---|---|---|---|\n")
	for _, e := range es {
		l := e.label()
		base := "cedar"
		if e.parallel {
			base = "cedar-parallel"
		}
		obase, nbase := "opa", "tw-none"
		if e.parallel {
			obase = "opa-parallel"
			nbase = ""
		}
		nr := "-"
		if nbase != "" {
			nr = fmt.Sprintf("%.2f", ratio(l, nbase))
		}
		fmt.Fprintf(&sb, "| %s | %.0f | %d | %.3f | %.3f | %s |\n", l, median(ns[l]), allocs[l], ratio(l, base), ratio(l, obase), nr)
	}
	fmt.Fprintf(&sb, "\nparallel scaling (serial / parallel, same round):")
	for _, n := range []string{"opa", "cedar", "tw-both"} {
		fmt.Fprintf(&sb, " %s %.2fx", n, ratio(n, n+"-parallel"))
	}
	t.Log("\n" + sb.String())
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
