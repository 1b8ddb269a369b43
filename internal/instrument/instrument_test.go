package instrument

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/toolwarden/toolwarden/plugins"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// corpus lists every module the instrumenter must handle: the hostile
// corpus, the test plugins, the conformance example and the first-party
// Go plugins.
func corpus(t testing.TB) map[string][]byte {
	t.Helper()
	files, _ := filepath.Glob(testkit.Path("internal", "plugin", "testdata", "*", "*.wasm"))
	files = append(files, testkit.Path("pdk", "testdata", "conformance", "example.wasm"))
	out := map[string][]byte{}
	for _, f := range files {
		out[f] = readFile(t, f)
	}
	for _, name := range plugins.Names() {
		out["builtin:"+name], _ = plugins.Builtin(name)
	}
	return out
}

// customSections returns the custom sections of a module, in order.
func customSections(t testing.TB, bin []byte) [][]byte {
	t.Helper()
	var out [][]byte
	d := &decoder{b: bin, pos: 8}
	for d.pos < len(bin) {
		id := d.byte()
		size := int(d.u32())
		if id == secCustom {
			out = append(out, bin[d.pos:d.pos+size])
		}
		d.pos += size
	}
	return out
}

func TestInstrumentCorpus(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	validate, _ := exec.LookPath("wasm-validate")
	for name, bin := range corpus(t) {
		t.Run(name, func(t *testing.T) {
			orig := bytes.Clone(bin)
			start := time.Now()
			out, err := Module(bin)
			if err != nil {
				t.Fatal(err)
			}
			if len(bin) > 1<<20 {
				t.Logf("%d -> %d bytes (+%.2f%%) in %v", len(bin), len(out), 100*float64(len(out)-len(bin))/float64(len(bin)), time.Since(start))
			}
			if !bytes.Equal(bin, orig) {
				t.Fatal("instrument modified its input")
			}
			if again, _ := Module(bin); !bytes.Equal(again, out) {
				t.Error("instrument is not deterministic")
			}
			cm, err := r.CompileModule(ctx, out)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			defer cm.Close(ctx)
			for _, g := range []string{StopExport, FuelExport} {
				if !bytes.Contains(out, []byte(g)) {
					t.Errorf("no %s export", g)
				}
			}
			if got, want := customSections(t, out), customSections(t, bin); len(got) != len(want) {
				t.Errorf("%d custom sections, want %d", len(got), len(want))
			} else {
				for i := range got {
					if !bytes.Equal(got[i], want[i]) {
						t.Errorf("custom section %d changed", i)
					}
				}
			}
			if _, err := Module(out); err == nil || !strings.Contains(err.Error(), "reserved for the host") {
				t.Errorf("instrumenting twice: %v, want the reserved-name error", err)
			}
			if validate != "" {
				f := filepath.Join(t.TempDir(), "out.wasm")
				if err := os.WriteFile(f, out, 0o644); err != nil {
					t.Fatal(err)
				}
				if msg, err := exec.Command(validate, f).CombinedOutput(); err != nil {
					t.Errorf("wasm-validate: %v\n%s", err, msg)
				}
			}
		})
	}
}

// featureCalls are the exports of testdata/wat/features.wasm with their
// arguments.
var featureCalls = []struct {
	name string
	args []uint64
	// checked: the call passes a check (a call, a bulk instruction, or
	// more than FuelTicks iterations of a loop: a loop looks at the flag
	// at its ticks), so it traps once the stop flag is set.
	checked bool
	// fails: the call traps anyway (before or at its first check).
	fails bool
}{
	{name: "g", args: nil, checked: false},
	{name: "leaf", args: []uint64{5}, checked: false},
	{name: "sum", args: []uint64{100}, checked: false}, // a loop that ends before its first tick
	{name: "sum", args: []uint64{FuelTicks}, checked: true},
	{name: "fib", args: []uint64{15}, checked: true},
	{name: "indirect", args: []uint64{0, 7}, checked: true},
	{name: "indirect", args: []uint64{1, 10}, checked: true},
	{name: "indirect", args: []uint64{3, 10}, checked: true, fails: true}, // a null table entry
	{name: "fill", args: []uint64{50}, checked: true},
	{name: "fill", args: []uint64{70000}, checked: true, fails: true}, // out of bounds
	{name: "passive", args: nil, checked: true},
	{name: "tables", args: []uint64{9}, checked: true},
	{name: "multi", args: []uint64{10}, checked: false},
	{name: "multi", args: []uint64{5000}, checked: true},
	{name: "misc", args: []uint64{0}, checked: false},
	{name: "misc", args: []uint64{1}, checked: false},
	{name: "misc", args: []uint64{2}, checked: false},
	{name: "misc", args: []uint64{7}, checked: false},
	{name: "simd", args: []uint64{0}, checked: false},
	{name: "simd", args: []uint64{5000}, checked: true},
}

type featureModule struct {
	mod  api.Module
	stop api.MutableGlobal
	fuel api.MutableGlobal
}

func instantiateFeatures(t *testing.T, r wazero.Runtime, cm wazero.CompiledModule, instrumented bool) featureModule {
	t.Helper()
	ctx := context.Background()
	mod, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	fm := featureModule{mod: mod}
	if instrumented {
		if _, err := mod.ExportedFunction(StartExport).Call(ctx); err != nil {
			t.Fatal(err)
		}
		fm.stop = mod.ExportedGlobal(StopExport).(api.MutableGlobal)
		fm.fuel = mod.ExportedGlobal(FuelExport).(api.MutableGlobal)
	}
	return fm
}

// An instrumented module computes what the original computes, and traps at
// its checks once the stop flag is set.
func TestInstrumentKeepsBehaviour(t *testing.T) {
	ctx := context.Background()
	bin := readFile(t, testkit.Path("internal", "plugin", "testdata", "wat", "features.wasm"))
	out, err := Module(bin)
	if err != nil {
		t.Fatal(err)
	}
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	orig, err := r.CompileModule(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := r.CompileModule(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range featureCalls {
		want, wantErr := instantiateFeatures(t, r, orig, false).mod.ExportedFunction(c.name).Call(ctx, c.args...)
		m := instantiateFeatures(t, r, inst, true)
		got, err := m.mod.ExportedFunction(c.name).Call(ctx, c.args...)
		if (err != nil) != (wantErr != nil) || err == nil && !equalU64(got, want) {
			t.Errorf("%s%v: instrumented %v, %v; original %v, %v", c.name, c.args, got, err, want, wantErr)
		}
		// As the host does when a deadline passes.
		m = instantiateFeatures(t, r, inst, true)
		m.stop.Set(1)
		m.fuel.Set(0)
		_, err = m.mod.ExportedFunction(c.name).Call(ctx, c.args...)
		if c.checked && (err == nil || !c.fails && !strings.Contains(err.Error(), "unreachable")) {
			t.Errorf("%s%v with the stop flag set: %v, want a trap", c.name, c.args, err)
		}
		if !c.checked && (err != nil) != (wantErr != nil) {
			t.Errorf("%s%v with the stop flag set: %v, want what the original does (%v)", c.name, c.args, err, wantErr)
		}
	}
	// The countdown alone (no stop flag) only makes the guest exit to Go.
	m := instantiateFeatures(t, r, inst, true)
	m.fuel.Set(0)
	if got, err := m.mod.ExportedFunction("sum").Call(ctx, 100000); err != nil || got[0] != 100000*100001/2%(1<<32) {
		t.Errorf("sum with fuel 0: %v, %v", got, err)
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The flag set by another goroutine stops a guest spinning in compiled
// code: wazero's compiler reloads the global at every loop header.
func TestInstrumentStopFromAnotherGoroutine(t *testing.T) {
	ctx := context.Background()
	out, err := Module(readFile(t, testkit.Path("internal", "plugin", "testdata", "wat", "features.wasm")))
	if err != nil {
		t.Fatal(err)
	}
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	cm, err := r.CompileModule(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	m := instantiateFeatures(t, r, cm, true)
	done := make(chan error)
	go func() {
		_, err := m.mod.ExportedFunction("spin").Call(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("spin returned before the flag was set: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	m.stop.Set(1)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Errorf("spin: %v, want a trap", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("spin did not stop")
	}
}

// Module builders for the refusal tests.

func wasmModule(sections ...[]byte) []byte {
	return append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Join(sections, nil)...)
}

func wasmSection(id byte, content ...byte) []byte { return appendSection(nil, id, content) }

// oneFunc is a module with one function () -> () whose instructions are
// code (without the final end).
func oneFunc(code ...byte) []byte {
	body := append([]byte{0x00}, code...) // no locals
	body = append(body, 0x0b)
	return wasmModule(
		wasmSection(secType, 1, 0x60, 0, 0),
		wasmSection(secFunction, 1, 0),
		wasmSection(secMemory, 1, 0, 1),
		wasmSection(secCode, append(appendU32([]byte{1}, uint32(len(body))), body...)...),
	)
}

func TestInstrumentRefuses(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	ok := oneFunc(0x01) // nop
	if _, err := Module(ok); err != nil {
		t.Fatalf("the base module: %v", err)
	}
	if _, err := r.CompileModule(ctx, ok); err != nil {
		t.Fatalf("the base module: %v", err)
	}
	for _, c := range []struct {
		name string
		bin  []byte
		want string
	}{
		{"not wasm", []byte("\x7fELF\x02\x01\x01\x00"), "bad magic"},
		{"version 2", append([]byte("\x00asm\x02\x00\x00\x00"), ok[8:]...), "version"},
		{"reserved export", wasmModule(wasmSection(secExport, append(appendName([]byte{1}, "__toolwarden_stop"), 2, 0)...)), `export "__toolwarden_stop" uses a name reserved for the host`},
		{"reserved prefix", wasmModule(wasmSection(secExport, append(appendName([]byte{1}, "__toolwarden_x"), 0, 0)...)), "reserved for the host"},
		{"try (exceptions)", oneFunc(0x06, 0x40, 0x0b), "unsupported opcode 0x6 at"},
		{"atomics (threads)", oneFunc(0xfe, 0x03, 0x00), "unsupported opcode 0xfe"},
		{"return_call (tail calls)", oneFunc(0x12, 0x00), "unsupported opcode 0x12"},
		{"ref.as_non_null (function references)", oneFunc(0xd4), "unsupported opcode 0xd4"},
		{"unassigned SIMD opcode", oneFunc(0xfd, 0x9a, 0x01), "unsupported opcode 0xfd 154"},
		{"relaxed SIMD", oneFunc(0xfd, 0x80, 0x02), "unsupported opcode 0xfd 256"},
		{"overlong SIMD opcode", oneFunc(0xfd, 0x8f, 0x00), "unsupported opcode 0xfd 15"},
		{"unknown 0xfc opcode", oneFunc(0xfc, 0x12), "unsupported opcode 0xfc 18"},
		{"multi-memory memarg", oneFunc(0x41, 0x00, 0x28, 0x40, 0x00, 0x00, 0x1a), "multi-memory"},
		{"memory.size of memory 1", oneFunc(0x3f, 0x01, 0x1a), "reserved byte must be 0x00"},
		{"overlong s32", oneFunc(0x41, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x1a), "malformed s32"},
		{"malformed u32", oneFunc(0x0c, 0x80, 0x80, 0x80, 0x80, 0x7f), "malformed u32"},
		{"negative block type", oneFunc(0x02, 0x50, 0x0b), "unsupported block type"},
		{"code after the end", oneFunc(0x0b, 0x01), "continues after its end"},
		{"unterminated body", oneFunc(0x02, 0x40), "unexpected end"},
		{"section out of order", wasmModule(wasmSection(secFunction, 0), wasmSection(secType, 0)), "out of order"},
		{"repeated section", wasmModule(wasmSection(secType, 0), wasmSection(secType, 0)), "out of order or repeated"},
		{"tag section", wasmModule(wasmSection(13, 0)), "unsupported section id 13"},
		{"section past the end", append(wasmModule(), secType, 10, 0), "runs past the end"},
		{"code without functions", wasmModule(wasmSection(secCode, 1, 2, 0, 0x0b)), "differ in length"},
		// Forged lengths that made wazero's decoder allocate gigabytes.
		{"forged import count", wasmModule(wasmSection(secImport, 0xff, 0xff, 0xff, 0xff, 0x0f)), "vector length 4294967295 is longer than the bytes left"},
		{"forged global count", wasmModule(wasmSection(secGlobal, 0x80, 0x80, 0x80, 0x80, 0x01)), "vector length"},
		{"forged data size", wasmModule(wasmSection(secData, 1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f)), "vector length"},
		{"forged element count", wasmModule(wasmSection(secElement, 1, 1, 0x00, 0xff, 0xff, 0xff, 0x0f)), "vector length"},
		{"forged function names", wasmModule(wasmSection(secCustom, append(appendName(nil, "name"), 1, 5, 0xff, 0xff, 0xff, 0xff, 0x0f)...)), "vector length"},
		{"forged local count", wasmModule(
			wasmSection(secType, 1, 0x60, 0, 0),
			wasmSection(secFunction, 1, 0),
			wasmSection(secCode, 1, 8, 1, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x7f, 0x0b)), "too many locals (4294967295, at most 50000)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Module(c.bin)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("instrument: %v (%d bytes), want an error containing %q", err, len(out), c.want)
			}
		})
	}
}

// Imported globals come first in the index space: the new globals follow
// them and the defined ones, and the start function moves to an export.
func TestInstrumentGlobalIndexAndStart(t *testing.T) {
	ctx := context.Background()
	bin := wasmModule(
		wasmSection(secType, 1, 0x60, 0, 1, 0x7f),
		wasmSection(secImport, append(appendName(appendName([]byte{1}, "env"), "g"), 3, 0x7f, 0)...),
		wasmSection(secFunction, 2, 0, 0),
		wasmSection(secMemory, 1, 0, 1),
		wasmSection(secGlobal, 1, 0x7f, 1, 0x41, 0x05, 0x0b),
		wasmSection(secExport, append(appendName([]byte{1}, "f"), 0, 0)...),
		wasmSection(secStart, 1),
		// Function 0: global.get 0 + global.get 1, in a loop that runs
		// once. Function 1, the start function, returns a value, which
		// a start function must not.
		wasmSection(secCode, 2,
			10, 0, 0x03, 0x7f, 0x23, 0x00, 0x23, 0x01, 0x6a, 0x0b, 0x0b,
			4, 0, 0x41, 0x00, 0x0b),
	)
	out, err := Module(bin)
	if err != nil {
		t.Fatal(err)
	}
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	// The original is invalid (its start function returns a value); the
	// instrumented one is valid, which shows the start section is gone.
	if _, err := r.CompileModule(ctx, bin); err == nil {
		t.Fatal("the original compiled")
	}
	cm, err := r.CompileModule(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.ExportedFunctions()[StartExport]; !ok {
		t.Error("no start export")
	}
	// Global 0 is imported, 1 defined; the stop flag is 2 and fuel 3.
	for _, want := range [][]byte{
		append(appendTickFlag(2), 0x04, 0x40, 0x00, 0x0b),
		{0x7f, 0x01, 0x41, 0x00, 0x0b, 0x7f, 0x01, 0x41, 0x80, 0x08, 0x0b},
	} {
		if !bytes.Contains(out, want) {
			t.Errorf("no % x in the output", want)
		}
	}
}

// appendTickFlag is how a tick reads the flag: global.get stop (then `if
// unreachable end`).
func appendTickFlag(stop uint32) []byte { return appendU32([]byte{0x23}, stop) }

// BenchmarkInstrument is the load-time cost of instrumenting the
// first-party plugins (Rust, 29 and 70 KB).
func BenchmarkInstrument(b *testing.B) {
	for _, name := range plugins.Names() {
		bin, _ := plugins.Builtin(name)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(bin)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Module(bin); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Arbitrary bytes never panic the instrumenter. A module wazero accepts is
// instrumented (unless it uses a reserved name), and the result compiles.
func FuzzInstrument(f *testing.F) {
	for name, bin := range corpus(f) {
		if !strings.HasPrefix(name, "builtin:") {
			f.Add(bin)
		}
	}
	f.Add(oneFunc(0xfd, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x1a))
	f.Add(oneFunc(0x03, 0x40, 0x0c, 0x00, 0x0b))
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, bin []byte) {
		out, err := Module(bin)
		if !wazeroSafe(bin) {
			return // wazero itself could run out of memory on it
		}
		// A runtime per input: wazero caches compiled modules by their
		// bytes, and the fuzzer repeats itself.
		r := wazero.NewRuntime(ctx)
		defer r.Close(ctx)
		cm, cerr := r.CompileModule(ctx, bin)
		if cerr != nil {
			return
		}
		cm.Close(ctx)
		if err != nil {
			if strings.Contains(err.Error(), "reserved for the host") || strings.Contains(err.Error(), "too many locals") {
				return
			}
			t.Fatalf("wazero compiles the module, instrument refuses it: %v", err)
		}
		cm, err = r.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("the instrumented module does not compile: %v", err)
		}
		cm.Close(ctx)
	})
}

// wazeroSafe reports whether every vector length in bin fits in the bytes
// left, which is what keeps wazero's decoder from allocating gigabytes:
// the fuzz test only hands such modules to wazero. (The host never hands it
// a module that instrument refused.)
func wazeroSafe(bin []byte) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, isIE := r.(*Error); !isIE {
				panic(r)
			}
			ok = false
		}
	}()
	if len(bin) < 8 {
		return true
	}
	d := &decoder{b: bin, pos: 8}
	for d.pos < len(bin) {
		id := d.byte()
		size := int(d.u32())
		d.skip(size)
		s := &decoder{b: bin[:d.pos], pos: d.pos - size}
		switch id {
		case secCustom:
			s.custom()
		case secType:
			s.types()
		case secImport:
			s.imports()
		case secFunction, secTable, secGlobal, secExport, secElement, secData:
			switch id {
			case secFunction:
				for n := s.count(); n > 0; n-- {
					s.u32()
				}
			case secTable:
				s.tables()
			case secGlobal:
				s.globals()
			case secExport:
				for n := s.count(); n > 0; n-- {
					s.name()
					s.byte()
					s.u32()
				}
			case secElement:
				s.elements()
			case secData:
				s.data()
			}
		case secCode:
			for n := s.count(); n > 0; n-- {
				end := int(s.u32())
				end += s.pos
				locals := uint64(0)
				for m := s.count(); m > 0; m-- {
					locals += uint64(s.u32())
					s.valType()
				}
				if locals > maxLocals || end > len(s.b) {
					return false
				}
				s.pos = end
			}
		}
	}
	return true
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loopModule exports f(n): a loop of n iterations whose body holds pad
// nops before its counter.
func loopModule(pad int) []byte {
	body := []byte{0x00, 0x03, 0x40} // no locals; loop
	body = append(body, bytes.Repeat([]byte{0x01}, pad)...)
	body = append(body, 0x20, 0x00, 0x41, 0x01, 0x6b, 0x22, 0x00, 0x0d, 0x00, 0x0b, 0x0b) // n--; br_if (n != 0); end; end
	return wasmModule(
		wasmSection(secType, 1, 0x60, 1, 0x7f, 0),
		wasmSection(secFunction, 1, 0),
		wasmSection(secMemory, 1, 0, 1),
		wasmSection(secExport, 1, 1, 'f', 0x00, 0),
		wasmSection(secCode, append(appendU32([]byte{1}, uint32(len(body))), body...)...),
	)
}

// A loop reads the stop flag at its ticks, every FuelTicks iterations, and
// at every iteration when its body is big: however big a loop body, no
// more than about FuelTicks*LoopBytesPerTick bytes of it run between two
// looks at the flag.
func TestInstrumentLoopTicksScaleWithTheBody(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	for _, c := range []struct {
		name     string
		pad      int
		n        uint64
		wantTrap bool
	}{
		{"a small loop that ends before its first tick returns", 0, 10, false},
		{"a small loop traps at its first tick", 0, FuelTicks + 1, true},
		{"a loop of half the tick budget in bytes does not tick at its first iteration", FuelTicks * LoopBytesPerTick / 2, 1, false},
		{"a loop of half the tick budget in bytes ticks at its second iteration", FuelTicks * LoopBytesPerTick / 2, 2, true},
		{"a loop body over the tick budget ticks at every iteration", FuelTicks * LoopBytesPerTick, 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := Module(loopModule(c.pad))
			if err != nil {
				t.Fatal(err)
			}
			cm, err := r.CompileModule(ctx, out)
			if err != nil {
				t.Fatal(err)
			}
			m, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(ctx)
			m.ExportedGlobal(StopExport).(api.MutableGlobal).Set(1)
			_, err = m.ExportedFunction("f").Call(ctx, c.n)
			if trapped := err != nil && strings.Contains(err.Error(), "unreachable"); trapped != c.wantTrap {
				t.Errorf("f(%d) with the stop flag set: %v, want a trap: %v", c.n, err, c.wantTrap)
			}
		})
	}
}
