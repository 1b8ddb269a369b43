package plugin

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// kitBuild builds one guest with one kit's toolchain into out.
type kitBuild struct {
	name  string
	build func(t *testing.T, out string)
}

// kitBuilds build testdata/<dir>/<base>.c, .rs and .ts with the C, Rust
// and AssemblyScript kits, as a plugin author would.
func kitBuilds(dir, base string) []kitBuild {
	src := filepath.Join("testdata", dir, base)
	return []kitBuild{
		{"c", func(t *testing.T, out string) {
			cc := requireTool(t, "clang")
			run(t, exec.Command(cc, "--target=wasm32", "-Os", "-mbulk-memory", "-nostdlib", "-Wall", "-Wextra", "-Werror",
				"-I../../pdk/c", "-Wl,--no-entry", "-Wl,--strip-debug", "-o", out, src+".c"))
		}},
		{"rust", func(t *testing.T, out string) {
			rustc := "/usr/bin/rustc"
			if _, err := os.Stat(rustc); err != nil {
				rustc = requireTool(t, "rustc")
			}
			flags := []string{"--edition", "2021", "--target", "wasm32-unknown-unknown", "-C", "opt-level=s", "-C", "panic=abort", "-C", "target-feature=+bulk-memory"}
			rlib := filepath.Join(t.TempDir(), "libtoolwarden_pdk.rlib")
			run(t, exec.Command(rustc, append(flags, "--crate-type", "rlib", "--crate-name", "toolwarden_pdk", "--cfg", `feature="panic-handler"`, "-o", rlib, "../../pdk/rust/src/lib.rs")...))
			run(t, exec.Command(rustc, append(flags, "--crate-type", "cdylib", "--crate-name", "rs"+base, "-C", "lto", "-C", "link-arg=-zstack-size=65536",
				"--extern", "toolwarden_pdk="+rlib, "-o", out, src+".rs")...))
		}},
		{"assemblyscript", func(t *testing.T, out string) {
			asc, err := filepath.Abs("../../scripts/npm/node_modules/.bin/asc")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(asc); err != nil {
				asc = requireTool(t, "asc")
			}
			cmd := exec.Command(asc, base+".ts", "-o", out, "-O3", "--noAssert", "--runtime", "../../../../pdk/assemblyscript/assembly/runtime",
				"--use", "abort=../../../../pdk/assemblyscript/assembly/index/toolwardenAbort")
			cmd.Dir = filepath.Join("testdata", dir)
			run(t, cmd)
		}},
	}
}
