package plugin

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/toolwarden/toolwarden/plugins"
)

func benchRaw(b *testing.B, cod bool, fn string) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(cod))
	defer r.Close(ctx)
	bin, _ := plugins.Builtin("trifecta")
	_, err := r.NewHostModuleBuilder("toolwarden").
		NewFunctionBuilder().WithFunc(func(a, b uint32) uint32 { return 0 }).Export("input_read").
		NewFunctionBuilder().WithFunc(func(a, b uint32) uint32 { return 0 }).Export("output_write").
		NewFunctionBuilder().WithFunc(func(a, b, c uint32) {}).Export("log").Instantiate(ctx)
	if err != nil {
		b.Fatal(err)
	}
	wasiInst(ctx, r)
	cm, err := r.CompileModule(ctx, bin)
	if err != nil {
		b.Fatal(err)
	}
	m, err := r.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		b.Fatal(err)
	}
	f := m.ExportedFunction(fn)
	stack := make([]uint64, 2)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		stack[0], stack[1] = 9, 0
		if err := f.CallWithStack(ctx, stack); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRawHandleCOD(b *testing.B)   { benchRaw(b, true, "toolwarden_handle") }
func BenchmarkRawHandleNoCOD(b *testing.B) { benchRaw(b, false, "toolwarden_handle") }

func wasiInst(ctx context.Context, r wazero.Runtime) {
	_, _ = wasiInstantiate(ctx, r)
}
