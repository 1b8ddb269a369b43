package examples_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/toolwarden/toolwarden/examples/plugins/go/rootguard"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/plugin"
)

// The numbers of docs/plugin-languages.md: the same policy (rootguard) in
// every language, measured in one run against the native Go implementation
// of it (package rootguard, called directly with the same input bytes).
//
//	go test -run XXX -bench PluginLanguages -benchtime 2s ./examples/plugins/
//
// prints a line per language and measurement; TestPluginLanguageTable
// (TOOLWARDEN_LANGUAGE_TABLE=1) prints the table with the ratios.

// checkInputs are the input envelopes of the suite's check cases (those
// that do not fail).
func checkInputs(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, sf := range loadSuite(t) {
		if sf.file.Plugin.Config["root"] != "/work" {
			continue
		}
		for _, c := range sf.file.Cases {
			if string(c.Event) == `"check"` && len(c.Input) > 0 && c.InputText == nil && len(c.Expect.Error) == 0 {
				out = append(out, []byte(c.Input))
			}
		}
	}
	if len(out) < 50 {
		t.Fatalf("only %d check inputs", len(out))
	}
	return out
}

// benchNative is the baseline: the Go policy called natively.
func benchNative(b *testing.B, inputs [][]byte) {
	p := rootguard.New()
	p.Handle(0, inputs[0]) // configure, as the first event does in a guest
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code, _ := p.Handle(2, inputs[i%len(inputs)]); code != 0 {
			b.Fatalf("code %d", code)
		}
	}
}

// benchCall: one check event through the plugin host (pooled warm
// instance, deadline enforced, output parsed), cycling over the inputs.
func benchCall(b *testing.B, bin []byte, inputs [][]byte) {
	ctx := context.Background()
	rt := quietRuntime(b)
	// A generous deadline: a shared, loaded machine must not turn a slow
	// call into a failed benchmark.
	p, err := plugin.FromBytes(ctx, rt, &config.Policy{Name: "rootguard", Config: map[string]any{"root": "/work"}, TimeoutMs: 5000}, bin)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, in := range inputs { // warm up
		if _, err := p.Raw(ctx, plugin.EventCheck, in); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Raw(ctx, plugin.EventCheck, inputs[i%len(inputs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// hostConfig is how the host configures wazero (the compiler engine; the
// host bounds guest time with a stop flag it instruments into every module
// at load, not with WithCloseOnContextDone).
func hostConfig() wazero.RuntimeConfig { return wazero.NewRuntimeConfig() }

// benchLoad: what loading a policy costs the host: a new plugin runtime,
// then plugin.FromBytes (ABI checks, instrumentation, CompileModule, the
// first instance and describe), with no compilation cache (cold) or with a
// filled cache directory (cached, what a restarted host sees).
func benchLoad(b *testing.B, bin []byte, cached bool) {
	ctx := context.Background()
	dir := b.TempDir()
	opts := plugin.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), NoDiskCache: !cached, CacheDir: dir}
	pol := &config.Policy{Name: "rootguard", Config: map[string]any{"root": "/work"}, TimeoutMs: 5000}
	load := func() (*plugin.Runtime, *plugin.Plugin) {
		rt, err := plugin.NewRuntime(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		p, err := plugin.FromBytes(ctx, rt, pol, bin)
		if err != nil {
			b.Fatal(err)
		}
		return rt, p
	}
	if cached {
		rt, p := load()
		p.Close()
		rt.Close(ctx)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rt, p := load()
		b.StopTimer()
		p.Close()
		rt.Close(ctx)
		b.StartTimer()
	}
}

// benchInstantiate: a new instance of a compiled module (start section and
// _initialize included) and its close, with the toolwarden imports and,
// for modules that import it, WASI linked, in a runtime configured as the
// host's (the module as built, without the host's instrumentation).
func benchInstantiate(b *testing.B, bin []byte) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, hostConfig())
	defer r.Close(ctx)
	stub := api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) { stack[0] = 0 })
	if _, err := r.NewHostModuleBuilder("toolwarden").
		NewFunctionBuilder().WithGoModuleFunction(stub, []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).Export("input_read").
		NewFunctionBuilder().WithGoModuleFunction(stub, []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).Export("output_write").
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(context.Context, api.Module, []uint64) {}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, nil).Export("log").
		Instantiate(ctx); err != nil {
		b.Fatal(err)
	}
	cm, err := r.CompileModule(ctx, bin)
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range cm.ImportedFunctions() {
		if mod, _, _ := f.Import(); mod == wasi_snapshot_preview1.ModuleName {
			wasi_snapshot_preview1.MustInstantiate(ctx, r)
			break
		}
	}
	mc := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, err := r.InstantiateModule(ctx, cm, mc)
		if err != nil {
			b.Fatal(err)
		}
		m.Close(ctx)
	}
}

// benchRawCall: the guest alone, without the plugin host around it: the
// module as built (no deadline instrumentation) in a bare wazero runtime,
// minimal host functions, one cached function handle, no output parsing.
// Set closeOnDone to see what wazero's own deadline mechanism
// (WithCloseOnContextDone) would cost instead of the host's stop flag.
func benchRawCall(b *testing.B, bin []byte, inputs [][]byte, closeOnDone bool) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, hostConfig().WithCloseOnContextDone(closeOnDone))
	defer r.Close(ctx)
	var cur []byte
	read := api.GoModuleFunc(func(ctx context.Context, m api.Module, st []uint64) {
		n := min(int(uint32(st[1])), len(cur))
		m.Memory().Write(uint32(st[0]), cur[:n])
		cur = cur[n:]
		st[0] = uint64(n)
	})
	ok := api.GoModuleFunc(func(ctx context.Context, m api.Module, st []uint64) { st[0] = 0 })
	i32 := api.ValueTypeI32
	if _, err := r.NewHostModuleBuilder("toolwarden").
		NewFunctionBuilder().WithGoModuleFunction(read, []api.ValueType{i32, i32}, []api.ValueType{i32}).Export("input_read").
		NewFunctionBuilder().WithGoModuleFunction(ok, []api.ValueType{i32, i32}, []api.ValueType{i32}).Export("output_write").
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(context.Context, api.Module, []uint64) {}), []api.ValueType{i32, i32, i32}, nil).Export("log").
		Instantiate(ctx); err != nil {
		b.Fatal(err)
	}
	cm, err := r.CompileModule(ctx, bin)
	if err != nil {
		b.Fatal(err)
	}
	if len(cm.ImportedFunctions()) > 0 {
		for _, f := range cm.ImportedFunctions() {
			if mod, _, _ := f.Import(); mod == wasi_snapshot_preview1.ModuleName {
				wasi_snapshot_preview1.MustInstantiate(ctx, r)
				break
			}
		}
	}
	m, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize"))
	if err != nil {
		b.Fatal(err)
	}
	handle := m.ExportedFunction("toolwarden_handle")
	stack := make([]uint64, 2)
	call := func(in []byte) {
		cur = in
		stack[0], stack[1] = uint64(plugin.EventCheck), uint64(len(in))
		if err := handle.CallWithStack(ctx, stack); err != nil || stack[0] != 0 {
			b.Fatalf("code %d, err %v", stack[0], err)
		}
	}
	for _, in := range inputs { // the first event configures; then warm up
		call(in)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		call(inputs[i%len(inputs)])
	}
}

// BenchmarkPluginLanguages measures every language; see the file comment.
func BenchmarkPluginLanguages(b *testing.B) {
	inputs := checkInputs(b)
	b.Run("call/native-go", func(b *testing.B) { benchNative(b, inputs) })
	for _, lang := range languages {
		bin := buildExample(b, lang)
		b.Run("call/"+lang, func(b *testing.B) { benchCall(b, bin, inputs) })
		b.Run("guest/"+lang, func(b *testing.B) { benchRawCall(b, bin, inputs, false) })
		b.Run("load-cold/"+lang, func(b *testing.B) { benchLoad(b, bin, false) })
		b.Run("load-cached/"+lang, func(b *testing.B) { benchLoad(b, bin, true) })
		b.Run("instantiate/"+lang, func(b *testing.B) { benchInstantiate(b, bin) })
	}
}

// TestPluginLanguageTable prints docs/plugin-languages.md's table:
//
//	TOOLWARDEN_LANGUAGE_TABLE=1 go test -run PluginLanguageTable -v -timeout 30m ./examples/plugins/
//
// Each measurement is a testing.Benchmark; rounds interleave the languages
// so that load on a shared machine hits them alike, and the table gives
// medians, with per-call times as ratios to native Go measured in the same
// round.
func TestPluginLanguageTable(t *testing.T) {
	if os.Getenv("TOOLWARDEN_LANGUAGE_TABLE") != "1" {
		t.Skip("set TOOLWARDEN_LANGUAGE_TABLE=1 to measure (a few minutes)")
	}
	rounds := 5
	inputs := checkInputs(t)
	bins := map[string][]byte{}
	for _, lang := range languages {
		bins[lang] = buildExample(t, lang)
	}
	ns := func(f func(b *testing.B)) float64 {
		r := testing.Benchmark(f)
		return float64(r.T.Nanoseconds()) / float64(r.N)
	}
	type samples struct{ call, ratio, raw, rawRatio, cold, cached, inst []float64 }
	got := map[string]*samples{}
	var native []float64
	for round := 0; round < rounds; round++ {
		n := ns(func(b *testing.B) { benchNative(b, inputs) })
		native = append(native, n)
		for _, lang := range languages {
			s := got[lang]
			if s == nil {
				s = &samples{}
				got[lang] = s
			}
			bin := bins[lang]
			c := ns(func(b *testing.B) { benchCall(b, bin, inputs) })
			s.call = append(s.call, c)
			s.ratio = append(s.ratio, c/n)
			rc := ns(func(b *testing.B) { benchRawCall(b, bin, inputs, false) })
			s.raw = append(s.raw, rc)
			s.rawRatio = append(s.rawRatio, rc/n)
			s.cold = append(s.cold, ns(func(b *testing.B) { benchLoad(b, bin, false) }))
			s.cached = append(s.cached, ns(func(b *testing.B) { benchLoad(b, bin, true) }))
			s.inst = append(s.inst, ns(func(b *testing.B) { benchInstantiate(b, bin) }))
		}
		t.Logf("round %d done", round+1)
	}
	var sb strings.Builder
	goCall := median(got["go"].call)
	fmt.Fprintf(&sb, "%d check inputs from pdk/testdata/conformance/rootguard.json; median of %d rounds; native Go: %s per call\n\n", len(inputs), rounds, dur(median(native)))
	goCold, goCached, goInst := median(got["go"].cold), median(got["go"].cached), median(got["go"].inst)
	sb.WriteString("| language | module size | compile + load, cold | compile + load, cached | instantiate | per call | per call vs native Go | per call vs Go guest | guest alone vs native Go |\n")
	sb.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&sb, "| native Go (baseline) | – | – | – | – | %s | **1.00x** | %.2fx | – |\n", dur(median(native)), median(native)/goCall)
	for _, lang := range languages {
		s := got[lang]
		fmt.Fprintf(&sb, "| %s | %s (%.3fx) | %s (%.3fx) | %s (%.2fx) | %s (%.2fx) | %s | **%.1fx** | %.2fx | %.1fx |\n", lang,
			size(len(bins[lang])), float64(len(bins[lang]))/float64(len(bins["go"])),
			dur(median(s.cold)), median(s.cold)/goCold, dur(median(s.cached)), median(s.cached)/goCached,
			dur(median(s.inst)), median(s.inst)/goInst,
			dur(median(s.call)), median(s.ratio), median(s.call)/goCall, median(s.rawRatio))
	}
	sb.WriteString("\nRatios in parentheses are against the Go guest (the first row), which has no native equivalent for size, compile or instantiate.\n")
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

func dur(ns float64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.2f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}
