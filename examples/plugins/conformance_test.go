package examples_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/internal/plugintest"
)

// The rootguard suite is a set of case files in the format of
// pdk/testdata/README.md (one plugin config per file, with input_text,
// expand and load_error for what plain JSON cannot say), run here by the
// same runner as `toolwarden plugin test`.

// suiteFile is one case file.
type suiteFile struct {
	name string
	file *plugintest.File
}

func suiteDir(t testing.TB) string {
	return filepath.Join(repoRoot(t), "pdk", "testdata", "conformance")
}

func loadSuite(t testing.TB) []suiteFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(suiteDir(t), "rootguard*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no rootguard*.json case files (%v)", err)
	}
	sort.Strings(paths)
	var out []suiteFile
	for _, p := range paths {
		f, err := plugintest.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, suiteFile{name: filepath.Base(p), file: f})
	}
	return out
}

func quietRuntime(t testing.TB) *plugin.Runtime {
	t.Helper()
	rt, err := plugin.NewRuntime(context.Background(), plugin.Options{
		CacheDir: t.TempDir(),
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

// runSuite runs every case file against one plugin binary.
func runSuite(t *testing.T, rt *plugin.Runtime, bin []byte, suite []suiteFile) {
	for _, sf := range suite {
		results, err := sf.file.Run(context.Background(), rt, bin, "rootguard", nil)
		if err != nil {
			t.Errorf("%s: load: %v", sf.name, err)
			continue
		}
		for _, r := range results {
			for _, p := range r.Problems {
				t.Errorf("%s: %s: %s", sf.name, r.Name, p)
			}
		}
	}
}

// TestConformance builds every example plugin with its real toolchain and
// runs the rootguard conformance suite against it through the plugin host.
func TestConformance(t *testing.T) {
	suite := loadSuite(t)
	n := 0
	for _, sf := range suite {
		n += len(sf.file.Cases)
	}
	if n < 100 {
		t.Fatalf("the suite has only %d cases", n)
	}
	rt := quietRuntime(t)
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			runSuite(t, rt, buildExample(t, lang), suite)
		})
	}
}

// TestConformanceCLI runs the suite through the real `toolwarden plugin
// test` command, as the READMEs tell users to.
func TestConformanceCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the toolwarden binary")
	}
	var files []string
	for _, sf := range loadSuite(t) {
		files = append(files, filepath.Join(suiteDir(t), sf.name))
	}
	bin := toolwardenCLI(t)
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			buildExample(t, lang)
			args := append([]string{"plugin", "test", builds[lang].path}, files...)
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "TOOLWARDEN_PLUGIN_CACHE="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("toolwarden %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		})
	}
}

// kits are the plugin kits' own conformance plugins (pdk/<kit>/example):
// the policy of pdk/testdata/README.md, which exercises every event.
var kits = []string{"pdk-c", "pdk-rust", "pdk-assemblyscript"}

// TestKitABIConformance runs the ABI vectors of pdk/testdata/conformance/
// cases.json against each kit's conformance plugin (the Go kit's runs in
// internal/plugin's tests).
func TestKitABIConformance(t *testing.T) {
	f, err := plugintest.ReadFile(filepath.Join(suiteDir(t), "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	rt := quietRuntime(t)
	for _, kit := range kits {
		t.Run(kit, func(t *testing.T) {
			results, err := f.Run(context.Background(), rt, buildExample(t, kit), "example", nil)
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
