package examples_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The example plugins are built by scripts/build-examples.sh, the same
// script CI and the READMEs use, so a test can never pass on a build
// command nobody else runs.

// languages are the example plugins, in the order of docs/plugin-languages.md.
var languages = []string{"go", "rust", "c", "c-wasi", "assemblyscript", "wat"}

// exitMissingToolchain is build-examples.sh's exit code when a language's
// toolchain is not installed.
const exitMissingToolchain = 3

// requireToolchains reports whether a missing toolchain must fail the test
// (CI) instead of skipping it (a developer machine without, say, rustc).
func requireToolchains() bool { return os.Getenv("TOOLWARDEN_REQUIRE_TOOLCHAINS") == "1" }

func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot find the source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

type built struct {
	wasm []byte
	path string
	err  error
	// missing is set when the toolchain is absent; err says which tool.
	missing bool
}

var (
	buildMu  sync.Mutex
	buildDir string
	builds   = map[string]*built{}
)

// buildExample builds one example plugin once per test binary, skipping the
// test (or failing it under TOOLWARDEN_REQUIRE_TOOLCHAINS=1) when its
// toolchain is missing.
func buildExample(t testing.TB, lang string) []byte {
	t.Helper()
	return buildOnce(t, lang).module(t, lang+" example")
}

// module is the built module, or ends the test: a skip when the toolchain
// is missing (a failure under TOOLWARDEN_REQUIRE_TOOLCHAINS=1), a failure
// when the build failed. what names the build in the message.
func (b *built) module(t testing.TB, what string) []byte {
	t.Helper()
	if b.missing {
		if requireToolchains() {
			t.Fatalf("%s: toolchain missing and TOOLWARDEN_REQUIRE_TOOLCHAINS=1: %v", what, b.err)
		}
		t.Skipf("SKIP %s: toolchain missing (%v); run scripts/setup.sh", what, b.err)
	}
	if b.err != nil {
		t.Fatalf("%s: build failed: %v", what, b.err)
	}
	return b.wasm
}

func buildOnce(t testing.TB, lang string) *built {
	buildMu.Lock()
	defer buildMu.Unlock()
	if b, ok := builds[lang]; ok {
		return b
	}
	if buildDir == "" {
		dir, err := os.MkdirTemp("", "toolwarden-examples-")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = dir
	}
	b := &built{path: filepath.Join(buildDir, lang+".wasm")}
	builds[lang] = b
	cmd := exec.Command(filepath.Join(repoRoot(t), "scripts", "build-examples.sh"), "-o", buildDir, lang)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == exitMissingToolchain:
		b.missing = true
		b.err = errors.New(strings.TrimSpace(out.String()))
	case err != nil:
		b.err = errors.New(err.Error() + ":\n" + out.String())
	default:
		b.wasm, b.err = os.ReadFile(b.path)
	}
	return b
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}
