package plugin

import (
	"context"
	"os"
	"testing"

	"github.com/tetratelabs/wazero"
)

func benchGX(b *testing.B, cod bool, fn string, arg uint64) {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(cod))
	defer r.Close(ctx)
	bin, _ := os.ReadFile("/tmp/gx/gx.wasm")
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
		stack[0] = arg
		if err := f.CallWithStack(ctx, stack); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGX(b *testing.B) {
	for _, cod := range []bool{false, true} {
		for _, fn := range []string{"noop", "loop", "scan", "calls"} {
			name := fn
			if cod {
				name += "/cod"
			}
			b.Run(name, func(b *testing.B) { benchGX(b, cod, fn, 1000) })
		}
	}
}
