package plugin

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/instrument"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/plugins"
)

// Loading instruments: the stop flag is there, the reserved names are
// refused with an ABI error, and the compile cache sees instrumented code.
func TestLoadRefusesReservedExports(t *testing.T) {
	rt := newRuntime(t, Options{})
	bin := readFile(t, filepath.Join("testdata", "wat", "noop.wasm"))
	out, err := instrument.Module(bin)
	if err != nil {
		t.Fatal(err)
	}
	_, err = FromBytes(context.Background(), rt, &config.Policy{Name: "twice"}, out)
	var f *Fault
	if !errors.As(err, &f) || f.Kind != FaultLoad || !strings.Contains(err.Error(), `export "__toolwarden_fuel" uses a name reserved for the host (prefix "__toolwarden_")`) {
		t.Errorf("load of an instrumented module: %v", err)
	}
	info, err := rt.Inspect(context.Background(), out)
	if err != nil || info.ABI == "v1" || len(info.Problems) != 2 {
		t.Errorf("inspect: %+v, %v", info, err)
	}
}

// The first-party plugins answer alike with and without the deadline
// instrumentation, on the host's own envelopes.
func TestInstrumentedBuiltinsAnswerAlike(t *testing.T) {
	with := newRuntime(t, Options{PoolSize: 1})
	without := newRuntime(t, WithoutDeadlines(Options{PoolSize: 1}))
	inputs := []*policy.CheckInput{
		trifectaCall(),
		argguardCall(),
		checkInput(`{"path":"/etc/passwd"}`),
		checkInput(`{"path":"/tmp/../etc/shadow","command":"rm -rf /"}`, labelPrivate),
		checkInput(`{}`, labelUntrusted, labelPrivate, "x"),
		trifectaInput(strings.Repeat("long body \u00e9 ", 500)),
	}
	for _, name := range plugins.Names() {
		var cfg map[string]any
		if name == "argguard" {
			cfg = argguardConfig
		}
		a := loadBuiltin(t, with, name, cfg)
		b := loadBuiltin(t, without, name, cfg)
		for i, in := range inputs {
			va, vb := a.Check(context.Background(), in), b.Check(context.Background(), in)
			if va.Err != nil || !reflect.DeepEqual(va, vb) {
				t.Errorf("%s, input %d: %+v with deadlines, %+v without", name, i, va, vb)
			}
		}
	}
}
