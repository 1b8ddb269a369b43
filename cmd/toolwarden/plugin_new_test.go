package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// exitMissingToolchain is every generated build.sh's exit code when its
// toolchain is not installed (as scripts/build-examples.sh).
const exitMissingToolchain = 3

// repoRootDir is the checkout these tests run in.
func repoRootDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// buildScaffold runs a project's build.sh, skipping the test when its
// toolchain is missing (failing under TOOLWARDEN_REQUIRE_TOOLCHAINS=1,
// as in CI).
func buildScaffold(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, "build.sh"), args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == exitMissingToolchain:
		testkit.Need(t, "the plugin's toolchain", errors.New(out.String()))
	case err != nil:
		t.Fatalf("build.sh: %v\n%s", err, out.String())
	}
}

// From idea to enforced plugin in three commands, in every language:
// `plugin new`, `build.sh`, `plugin test` (and `check` through the whole
// host). Each project is built outside the repository with the real
// toolchain.
func TestPluginNewBuildsAndPassesItsCasesInEveryLanguage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin in every language")
	}
	t.Parallel()
	root := repoRootDir(t)
	for _, lang := range pluginLangs {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			name := "my-" + lang + "-policy"
			dir := filepath.Join(t.TempDir(), name)
			args := []string{"new", "--lang", lang, "--dir", dir, name}
			var env []string
			switch lang {
			case "go":
				args = append(args, "--pdk", root)
				env = append(env, "GOFLAGS=-mod=mod")
			case "assemblyscript":
				// The compiler scripts/setup.sh installed, rather than an
				// npm install from the network in every test run.
				if asc := filepath.Join(root, "scripts", "npm", "node_modules", ".bin", "asc"); fileExists(asc) {
					env = append(env, "ASC="+asc)
				}
			}
			// 1. plugin new
			if code, out, errOut := runPluginCLI(t, t.TempDir(), args...); code != exitOK {
				t.Fatalf("plugin new: exit %d\n%s%s", code, out, errOut)
			}
			// 2. build.sh
			buildScaffold(t, dir, env)
			wasm := filepath.Join(dir, name+".wasm")
			// 3. plugin test
			code, out, errOut := runPluginCLI(t, t.TempDir(), "test", "-v", wasm, filepath.Join(dir, "cases.json"))
			if code != exitOK || !strings.Contains(out, "PASS: 6/6") {
				t.Fatalf("plugin test: exit %d\n%s%s", code, out, errOut)
			}
			// And enforced through the host, with the generated config.
			var o, eo bytes.Buffer
			e := &streams{stdout: &o, stderr: &eo}
			code = run(e.env(), []string{"check", "--config", filepath.Join(dir, "toolwarden.toml"), filepath.Join(dir, "call.json")})
			if code != exitDeny || !strings.Contains(o.String(), `"plugin:`+name+`"`) {
				t.Fatalf("check: exit %d\n%s%s", code, o.String(), eo.String())
			}
		})
	}
}

// The C project also builds against wasi-libc.
func TestPluginNewCBuildsAgainstWASILibc(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin")
	}
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "p")
	if code, out, errOut := runPluginCLI(t, t.TempDir(), "new", "--lang", "c", "--dir", dir, "wasi-c"); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	buildScaffold(t, dir, nil, "--wasi")
	code, out, errOut := runPluginCLI(t, t.TempDir(), "test", filepath.Join(dir, "wasi-c.wasm"), filepath.Join(dir, "cases.json"))
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

// A rustc first on PATH without the wasm32 standard library (a rustup
// toolchain without the target) is passed over for one that has it; an
// explicit RUSTC without it is an error that says how to get it.
func TestPluginNewRustBuildFindsARustcWithTheWasmTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin")
	}
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "p")
	if code, out, errOut := runPluginCLI(t, t.TempDir(), "new", "--lang", "rust", "--dir", dir, "rusty"); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	bin := t.TempDir()
	fake := filepath.Join(bin, "rustc")
	// Like rustup's rustc without the target: it names a libdir that does
	// not exist, and fails at any build.
	os.WriteFile(fake, []byte("#!/bin/sh\n[ \"$1\" = --print ] && { echo /nonexistent/wasm32-unknown-unknown/lib; exit 0; }\necho 'error: cannot find std for wasm32' >&2\nexit 1\n"), 0o755)
	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")

	cmd := exec.Command(filepath.Join(dir, "build.sh"))
	cmd.Env = append(os.Environ(), "PATH="+path, "RUSTC="+fake)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitMissingToolchain || !strings.Contains(string(out), "rustup target add wasm32-unknown-unknown") {
		t.Errorf("RUSTC without the target: %v\n%s", err, out)
	}

	env := []string{"PATH=" + path, "RUSTC="}
	buildScaffold(t, dir, env)
	if code, out, errOut := runPluginCLI(t, t.TempDir(), "test", filepath.Join(dir, "rusty.wasm"), filepath.Join(dir, "cases.json")); code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestPluginNewRefusals(t *testing.T) {
	t.Parallel()
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"a language is required", []string{"new", "p"}, exitUsage, "--lang is required: go, rust, c, assemblyscript, wat"},
		{"an unknown language is named", []string{"new", "--lang", "zig", "p"}, exitUsage, `--lang "zig": want one of`},
		{"a name must fit every language's rules", []string{"new", "--lang", "c", "My Plugin"}, exitUsage, `name "My Plugin": want a lower-case letter`},
		{"a name is required", []string{"new", "--lang", "c"}, exitUsage, "want one NAME"},
		{"--pdk is for Go", []string{"new", "--lang", "c", "--pdk", ".", "p"}, exitUsage, "--pdk is for --lang go"},
		{"--pdk must be a checkout", []string{"new", "--lang", "go", "--dir", filepath.Join(t.TempDir(), "p"), "--pdk", t.TempDir(), "p"}, exitError, "not a toolwarden checkout"},
		{"a folder with files in it is left alone", []string{"new", "--lang", "c", "--dir", full, "p"}, exitError, "exists and is not empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runPluginCLI(t, t.TempDir(), tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d (want %d)\n%s%s\nwant stderr to contain %q", code, tt.code, out, errOut, tt.want)
			}
		})
	}
	if ents, _ := os.ReadDir(full); len(ents) != 1 {
		t.Errorf("the non-empty folder was written to: %v", ents)
	}
}

func TestPluginNewGoModDependsOnTheKit(t *testing.T) {
	t.Parallel()
	root := repoRootDir(t)
	tests := []struct {
		name string
		dir  func(t *testing.T) string
		pdk  string
		want []string
	}{
		{"--pdk writes a replace directive to the checkout",
			func(t *testing.T) string { return filepath.Join(t.TempDir(), "p") }, root,
			[]string{"require github.com/toolwarden/toolwarden v0.0.0-00010101000000-000000000000", "replace github.com/toolwarden/toolwarden => "}},
		{"inside a checkout the project builds against it, by a relative path",
			func(t *testing.T) string {
				d, err := os.MkdirTemp(filepath.Join(root, "cmd", "toolwarden", "testdata"), "scaffold-")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(d) })
				return filepath.Join(d, "p")
			}, "",
			[]string{"replace github.com/toolwarden/toolwarden => ../../../../.."}},
		{"outside a checkout the project builds against the kit it carries",
			func(t *testing.T) string { return filepath.Join(t.TempDir(), "p") }, "",
			[]string{"require github.com/toolwarden/toolwarden v0.0.0-00010101000000-000000000000", "replace github.com/toolwarden/toolwarden => ./toolwarden-pdk"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir(t)
			args := []string{"new", "--lang", "go", "--dir", dir, "p"}
			if tt.pdk != "" {
				args = append(args, "--pdk", tt.pdk)
			}
			code, out, errOut := runPluginCLI(t, t.TempDir(), args...)
			if code != exitOK {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
			for _, w := range tt.want {
				if !strings.Contains(string(mod), w) {
					t.Errorf("go.mod lacks %q:\n%s", w, mod)
				}
			}
		})
	}
}

// Every file a project names exists in the embedded templates and kits,
// renders, and the README lists it.
func TestPluginNewWritesEveryFileItNames(t *testing.T) {
	t.Parallel()
	for _, lang := range pluginLangs {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "p")
			args := []string{"new", "--lang", lang, "--dir", dir, "p"}
			if lang == "go" {
				args = append(args, "--pdk", repoRootDir(t))
			}
			if code, out, errOut := runPluginCLI(t, t.TempDir(), args...); code != exitOK {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
			for _, f := range projectFiles(lang, "p") {
				st, err := os.Stat(filepath.Join(dir, f.Path))
				if err != nil {
					t.Errorf("%s: %v", f.Path, err)
					continue
				}
				if strings.HasSuffix(f.Path, ".sh") && st.Mode()&0o111 == 0 {
					t.Errorf("%s is not executable", f.Path)
				}
				if !strings.Contains(string(readme), "| `"+f.Path+"` |") {
					t.Errorf("README does not list %s", f.Path)
				}
			}
			if strings.Contains(string(readme), "<no value>") {
				t.Errorf("README has an empty template field:\n%s", readme)
			}
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// streams builds an env for run with the given streams.
type streams struct{ stdout, stderr *bytes.Buffer }

func (e *streams) env() *env {
	return &env{stdin: strings.NewReader(""), stdout: e.stdout, stderr: e.stderr, getenv: func(string) string { return "" }}
}
