package examples_test

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

func benchRawCOD(b *testing.B, lang string, cod bool) { benchRawCOD3(b, lang, cod, checkInputs(b)) }
func benchRawCOD2(b *testing.B, lang string, in [][]byte) { benchRawCOD3(b, lang, true, in) }
func benchRawCOD3(b *testing.B, lang string, cod bool, inputs [][]byte) {
	ctx := context.Background()
	bin := buildExample(b, lang)
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(cod))
	defer r.Close(ctx)
	var cur []byte
	var pos int
	read := api.GoModuleFunc(func(ctx context.Context, m api.Module, st []uint64) {
		dst, n := uint32(st[0]), int(uint32(st[1]))
		if n > len(cur)-pos {
			n = len(cur) - pos
		}
		m.Memory().Write(dst, cur[pos:pos+n])
		pos += n
		st[0] = uint64(n)
	})
	write := api.GoModuleFunc(func(ctx context.Context, m api.Module, st []uint64) { st[0] = 0 })
	r.NewHostModuleBuilder("toolwarden").
		NewFunctionBuilder().WithGoModuleFunction(read, []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).Export("input_read").
		NewFunctionBuilder().WithGoModuleFunction(write, []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).Export("output_write").
		NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(context.Context, api.Module, []uint64) {}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32, api.ValueTypeI32}, nil).Export("log").
		Instantiate(ctx)
	m, err := r.InstantiateModule(ctx, mustCompile(b, r, bin), wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		b.Fatal(err)
	}
	h := m.ExportedFunction("toolwarden_handle")
	stack := make([]uint64, 2)
	call := func(in []byte) {
		cur, pos = in, 0
		stack[0], stack[1] = 2, uint64(len(in))
		if err := h.CallWithStack(ctx, stack); err != nil || stack[0] != 0 {
			b.Fatal(err, stack[0])
		}
	}
	for _, in := range inputs {
		call(in)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		call(inputs[i%len(inputs)])
	}
}

func mustCompile(b *testing.B, r wazero.Runtime, bin []byte) wazero.CompiledModule {
	cm, err := r.CompileModule(context.Background(), bin)
	if err != nil {
		b.Fatal(err)
	}
	return cm
}

func BenchmarkCODTmp(b *testing.B) {
	for _, lang := range []string{"c", "wat"} {
		b.Run(lang+"/cod", func(b *testing.B) { benchRawCOD(b, lang, true) })
		b.Run(lang+"/nocod", func(b *testing.B) { benchRawCOD(b, lang, false) })
	}
}

func TestPerInputTmp(t *testing.T) {
	inputs := checkInputs(t)
	for _, lang := range []string{"c", "wat"} {
		for _, i := range []int{0, 3, 8, 20, 30, 40, 50, 60} {
			if i >= len(inputs) {
				continue
			}
			in := inputs[i : i+1]
			r := testing.Benchmark(func(b *testing.B) { benchRawCOD2(b, lang, in) })
			t.Logf("%s input %d (%d bytes): %d ns  %.60s", lang, i, len(in[0]), r.NsPerOp(), string(in[0][len(in[0])-250:]))
		}
	}
}
