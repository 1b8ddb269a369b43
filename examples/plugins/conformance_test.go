package examples_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host/plugin"
	"github.com/toolwarden/toolwarden/host/plugin/plugintest"
)

// The rootguard suite is a set of case files in the format of
// pdk/testdata/README.md (one plugin config per file), run here by the same
// runner as `toolwarden plugin test`. Two extensions, described in
// pdk/testdata/conformance/README.md, are applied by suiteFile before the
// runner sees a file:
//
//   - a case's "input_text" is the exact input bytes (malformed envelopes
//     cannot be written as JSON), with "expand" markers replaced by
//     repeated text (100 KB arguments without a 100 KB file);
//   - a file's "load_error" says the plugin must be refused at load, with
//     an error containing that text.

type extFile struct {
	LoadError string    `json:"load_error"`
	Cases     []extCase `json:"cases"`
}

type extCase struct {
	InputText *string `json:"input_text"`
	Expand    map[string]struct {
		Repeat string `json:"repeat"`
		Times  int    `json:"times"`
	} `json:"expand"`
}

// suiteFile is one case file, ready for plugintest.
type suiteFile struct {
	name      string
	file      *plugintest.File
	loadError string
	// extended: the file uses an extension, so the toolwarden CLI cannot
	// run it as written.
	extended bool
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
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f plugintest.File
		var x extFile
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := json.Unmarshal(raw, &x); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		sf := suiteFile{name: filepath.Base(p), file: &f, loadError: x.LoadError, extended: x.LoadError != ""}
		for i, c := range x.Cases {
			if c.InputText == nil {
				if len(c.Expand) > 0 {
					t.Fatalf("%s: case %q: expand needs input_text", p, f.Cases[i].Name)
				}
				continue
			}
			sf.extended = true
			b := []byte(*c.InputText)
			for marker, e := range c.Expand {
				b = bytes.ReplaceAll(b, []byte(marker), bytes.Repeat([]byte(e.Repeat), e.Times))
			}
			f.Cases[i].Input = b
		}
		out = append(out, sf)
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
	ctx := context.Background()
	for _, sf := range suite {
		results, err := sf.file.Run(ctx, rt, bin, "rootguard", nil)
		if sf.loadError != "" {
			if err == nil || !strings.Contains(err.Error(), sf.loadError) {
				t.Errorf("%s: want the plugin refused at load with %q, got %v", sf.name, sf.loadError, err)
			}
			continue
		}
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

// TestConformanceCLI runs the suite's plain case files through the real
// `toolwarden plugin test` command, as the READMEs tell users to.
func TestConformanceCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the toolwarden binary")
	}
	var files []string
	for _, sf := range loadSuite(t) {
		if !sf.extended {
			files = append(files, filepath.Join(suiteDir(t), sf.name))
		}
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
// host/plugin's tests).
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
