package testkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestRootIsTheFolderWhoseGoModDeclaresToolwarden(t *testing.T) {
	t.Parallel()
	if !declaresModule(filepath.Join(Root(), "go.mod"), module) {
		t.Fatalf("Root() = %s: its go.mod does not declare %s", Root(), module)
	}
	if _, err := os.Stat(Path("internal", "testkit", "doc.go")); err != nil {
		t.Fatalf("Path does not reach this package's own source from the root: %v", err)
	}
}

func TestTheRootWalksPastAnotherModulesGoMod(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	inner := filepath.Join(top, "bench", "peers")
	deep := filepath.Join(inner, "cmd")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(top, "go.mod"), "// the module\nmodule "+module+"\n\ngo 1.26\n")
	write(t, filepath.Join(inner, "go.mod"), "module "+module+"/bench/peers\n")
	got, ok := findModuleRoot(deep, module)
	if !ok || got != top {
		t.Fatalf("findModuleRoot(%s) = %q, %v; want %q (the outer module)", deep, got, ok, top)
	}
}

func TestNoRootIsFoundOutsideTheModule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/other\n")
	if got, ok := findModuleRoot(dir, module); ok {
		t.Fatalf("found a root at %s under a module that is not toolwarden's", got)
	}
}

// The child half of the toolchain-rule test: it runs only when the parent
// below starts this test binary with childEnv set.
const childEnv = "TESTKIT_NEED_CHILD"

func TestChildNeedsAMissingToolchain(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("runs only as the child of TestAMissingToolchainSkipsLocallyAndFailsInCI")
	}
	Need(t, "the frobnicator", errors.New("not installed"))
	t.Log("reached past Need")
}

func TestAMissingToolchainSkipsLocallyAndFailsInCI(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		require string
		want    string
	}{
		{"", "--- SKIP: TestChildNeedsAMissingToolchain"},
		{"0", "--- SKIP: TestChildNeedsAMissingToolchain"},
		{"1", "--- FAIL: TestChildNeedsAMissingToolchain"},
	} {
		t.Run(fmt.Sprintf("%s=%q", RequireEnv, tc.require), func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestChildNeedsAMissingToolchain$", "-test.v")
			cmd.Env = append(os.Environ(), childEnv+"=1", RequireEnv+"="+tc.require)
			out, _ := cmd.CombinedOutput()
			if !strings.Contains(string(out), tc.want) {
				t.Fatalf("want %q in the child's output:\n%s", tc.want, out)
			}
			if strings.Contains(string(out), "reached past Need") {
				t.Fatalf("the test went on past a missing toolchain:\n%s", out)
			}
			if !strings.Contains(string(out), "the frobnicator") || !strings.Contains(string(out), "scripts/setup.sh") {
				t.Fatalf("the message does not say what is missing and how to install it:\n%s", out)
			}
		})
	}
}

func TestAToolchainThatIsPresentNeitherSkipsNorFails(t *testing.T) {
	t.Parallel()
	// go runs this test, so it is on the PATH.
	if p := LookPath(t, "go"); !filepath.IsAbs(p) {
		t.Fatalf("LookPath(go) = %q, want an absolute path", p)
	}
}

func TestTheBufferKeepsEveryWriteFromManyGoroutines(t *testing.T) {
	t.Parallel()
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(&b, "%d\n", i)
				_ = b.String() // a reader racing the writers, as a test polling a log does
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 800 {
		t.Fatalf("%d lines, want 800", n)
	}
	c := b.Bytes()
	c[0] = 'x'
	if b.String()[0] == 'x' {
		t.Fatal("Bytes handed out the buffer itself: a caller's edit changed what was written")
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
