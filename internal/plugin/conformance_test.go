package plugin_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/internal/plugintest"
)

const vectors = "../../pdk/testdata/conformance/cases.json"

// Every PDK's example plugin passes the same conformance vectors. The WAT
// one is written from pdk/ABI.md alone (no PDK), which proves the document
// is enough to write a plugin.
func TestConformance(t *testing.T) {
	examples := map[string]func(t *testing.T) []byte{
		"wat (no PDK)": func(t *testing.T) []byte {
			b, err := os.ReadFile("../../pdk/testdata/conformance/example.wasm")
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		"go (pdk/go)": func(t *testing.T) []byte { return buildGoPlugin(t, "../../examples/plugins/go/conformance") },
	}
	f, err := plugintest.ReadFile(vectors)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 20 {
		t.Fatalf("only %d vectors", len(f.Cases))
	}
	// With the deadline instrumentation (as the host runs plugins) and
	// without it: the instrumented module answers every vector as the
	// module as built does.
	opts := plugin.Options{CacheDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, mode := range []struct {
		name string
		opts plugin.Options
	}{{"", opts}, {" without deadlines", plugin.WithoutDeadlines(opts)}} {
		rt, err := plugin.NewRuntime(context.Background(), mode.opts)
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close(context.Background())
		for name, build := range examples {
			t.Run(name+mode.name, func(t *testing.T) {
				results, err := f.Run(context.Background(), rt, build(t), "example", nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range results {
					for _, p := range r.Problems {
						t.Errorf("%s: %s", r.Name, p)
					}
				}
			})
		}
	}
}

// buildGoPlugin builds a Go plugin package as the ABI asks.
func buildGoPlugin(t testing.TB, pkg string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "plugin.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
