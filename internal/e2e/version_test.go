package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionReportsWhatGoRecordedInTheBinary builds toolwarden with VCS
// stamping on and checks that `toolwarden version` and `--version` say
// exactly what `go version -m` reads from the same binary: the module
// version (a tag for go install ...@vX, "(devel)" or a pseudo-version for
// a local build), the revision with +dirty, and its time. A version
// written by hand into the source would drift from it.
func TestVersionReportsWhatGoRecordedInTheBinary(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "toolwarden")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/toolwarden")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		// Outside a VCS checkout -buildvcs=true refuses; auto stamps what it can.
		build = exec.Command("go", "build", "-buildvcs=auto", "-o", bin, "./cmd/toolwarden")
		build.Dir = root
		if out2, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s\n%s", err, out, out2)
		}
	}
	meta, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	var modVersion, rev, when, goVersion string
	dirty := false
	for i, line := range strings.Split(string(meta), "\n") {
		f := strings.Fields(line)
		switch {
		case i == 0 && len(f) == 2:
			goVersion = f[1]
		case len(f) >= 3 && f[0] == "mod":
			modVersion = f[2]
		case len(f) == 2 && f[0] == "build":
			k, v, _ := strings.Cut(f[1], "=")
			switch k {
			case "vcs.revision":
				rev = v
			case "vcs.time":
				when = v
			case "vcs.modified":
				dirty = v == "true"
			}
		}
	}
	if modVersion == "" {
		t.Fatalf("go version -m shows no module version:\n%s", meta)
	}
	want := "toolwarden " + modVersion
	if rev != "" {
		if dirty {
			rev += "+dirty"
		}
		want += " revision " + rev
	}
	if when != "" {
		want += " " + when
	}
	want += " " + goVersion
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("toolwarden %s = %q\nwant (from go version -m) %q", arg, got, want)
		}
	}
}
