package plugins_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/internal/plugintest"
	"github.com/toolwarden/toolwarden/plugins"
)

// newRuntime is a plugin runtime with no disk cache and a quiet log.
func newRuntime(t testing.TB) *plugin.Runtime {
	t.Helper()
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{NoDiskCache: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	return rt
}

// runCases runs a case file against a module and returns its results.
func runCases(t *testing.T, rt *plugin.Runtime, file string, bin []byte, name string) []plugintest.Result {
	t.Helper()
	f, err := plugintest.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Run(context.Background(), rt, bin, name, nil)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return res
}

// Every first-party module passes every case in its cases/ folder: what
// it answers, case by case, in the language-neutral format of
// `toolwarden plugin test` (pdk/testdata/README.md), as the embedded
// module the binary ships.
func TestEveryModulePassesItsCaseFiles(t *testing.T) {
	rt := newRuntime(t)
	for _, name := range plugins.Names() {
		bin, _ := plugins.Builtin(name)
		files, _ := filepath.Glob(filepath.Join(name, "cases", "*.json"))
		if len(files) == 0 {
			t.Errorf("%s: no case files in %s/cases", name, name)
		}
		n := 0
		for _, file := range files {
			for _, r := range runCases(t, rt, file, bin, name) {
				n++
				if len(r.Problems) > 0 {
					t.Errorf("%s: %s: %s", file, r.Name, strings.Join(r.Problems, "; "))
				}
			}
		}
		t.Logf("%s: %d cases in %d files", name, n, len(files))
	}
}

// Every case that expects the module to say something (a verdict, a
// label, a refused config) fails against a module that says nothing (the
// noop module): no case passes by checking nothing.
func TestCasesThatExpectAnAnswerFailAgainstTheNoopModule(t *testing.T) {
	rt := newRuntime(t)
	noop, err := os.ReadFile("../internal/plugin/testdata/wat/noop.wasm")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range plugins.Names() {
		files, _ := filepath.Glob(filepath.Join(name, "cases", "*.json"))
		for _, file := range files {
			f, err := plugintest.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			res := runCases(t, rt, file, noop, name)
			if len(res) != len(f.Cases) {
				t.Fatalf("%s: %d results for %d cases", file, len(res), len(f.Cases))
			}
			for i, r := range res {
				if says(&f.Cases[i]) && len(r.Problems) == 0 {
					t.Errorf("%s: %s passes against the noop module", file, r.Name)
				}
			}
		}
	}
}

// says reports whether a case expects an answer that is not silence.
func says(c *plugintest.Case) bool {
	x := c.Expect
	return c.LoadError != "" || x.Decision != nil && *x.Decision != "abstain" || x.Labels != nil && len(*x.Labels) > 0
}
