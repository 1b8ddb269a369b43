package host

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/plugins"
)

// This package's tests name the first-party modules, as the program does
// when it hands them to the host with Settings.WithBuiltins.
func init() { testBuiltins = plugins.Modules() }

// The engine ships no modules: a host given none refuses builtin = "<name>"
// and says so, and one given a module by name runs it.
func TestAHostHasOnlyTheBuiltinsItIsGiven(t *testing.T) {
	saved := testBuiltins
	testBuiltins = nil
	defer func() { testBuiltins = saved }()
	cfg, err := config.LoadBytes("c.toml", []byte("[policies.tri]\nbuiltin = \"trifecta\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := New(ctx, cfg, Defaults().WithoutPluginDiskCache())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if w := fmt.Sprint(h.Warnings()); !strings.Contains(w, `no built-in plugin "trifecta" (built in: none in this program)`) {
		t.Errorf("a host given no modules: warnings %s", w)
	}
	mod, _ := plugins.Builtin("trifecta")
	h2, err := New(ctx, cfg, Defaults().WithoutPluginDiskCache().WithBuiltins(map[string][]byte{"trifecta": mod}))
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close(ctx)
	if w := h2.Warnings(); len(w) != 0 {
		t.Errorf("a host given the module: warnings %v", w)
	}
}
