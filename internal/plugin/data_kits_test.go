package plugin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// The C, Rust and AssemblyScript kits' data handlers, through real guests built with the
// kits' toolchains (testdata/kitdata): the data file arrives once per
// instance and decides.
func TestKitDataHandlersGetTheDataFileOnce(t *testing.T) {
	for _, kit := range []struct {
		name  string
		build func(t *testing.T, out string)
	}{
		{"c", func(t *testing.T, out string) {
			cc := requireTool(t, "clang")
			run(t, exec.Command(cc, "--target=wasm32", "-Os", "-mbulk-memory", "-nostdlib", "-Wall", "-Wextra", "-Werror",
				"-I../../pdk/c", "-Wl,--no-entry", "-Wl,--strip-debug", "-o", out, "testdata/kitdata/data.c"))
		}},
		{"rust", func(t *testing.T, out string) {
			rustc := "/usr/bin/rustc"
			if _, err := os.Stat(rustc); err != nil {
				rustc = requireTool(t, "rustc")
			}
			flags := []string{"--edition", "2021", "--target", "wasm32-unknown-unknown", "-C", "opt-level=s", "-C", "panic=abort", "-C", "target-feature=+bulk-memory"}
			rlib := filepath.Join(t.TempDir(), "libtoolwarden_pdk.rlib")
			run(t, exec.Command(rustc, append(flags, "--crate-type", "rlib", "--crate-name", "toolwarden_pdk", "--cfg", `feature="panic-handler"`, "-o", rlib, "../../pdk/rust/src/lib.rs")...))
			run(t, exec.Command(rustc, append(flags, "--crate-type", "cdylib", "--crate-name", "rsdata", "-C", "lto", "-C", "link-arg=-zstack-size=65536",
				"--extern", "toolwarden_pdk="+rlib, "-o", out, "testdata/kitdata/data.rs")...))
		}},
		{"assemblyscript", func(t *testing.T, out string) {
			asc, err := filepath.Abs("../../scripts/npm/node_modules/.bin/asc")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(asc); err != nil {
				asc = requireTool(t, "asc")
			}
			cmd := exec.Command(asc, "data.ts", "-o", out, "-O3", "--noAssert", "--runtime", "../../../../pdk/assemblyscript/assembly/runtime",
				"--use", "abort=../../../../pdk/assemblyscript/assembly/index/toolwardenAbort")
			cmd.Dir = "testdata/kitdata"
			run(t, cmd)
		}},
	} {
		t.Run(kit.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "data.wasm")
			kit.build(t, out)
			data := filepath.Join(t.TempDir(), "hosts.json")
			if err := os.WriteFile(data, []byte(`{"hosts":["fs"]}`), 0o600); err != nil {
				t.Fatal(err)
			}
			rt := newRuntime(t, Options{})
			p, err := FromBytes(context.Background(), rt, &config.Policy{Name: "hosts", Data: data}, readFile(t, out))
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if !p.wantsInit() {
				t.Fatal(`the kit did not list "init" in describe`)
			}
			for i := 0; i < 10; i++ {
				if v := p.Check(context.Background(), checkInput(`{}`)); v.Verdict != policy.Allow || v.Reason != "inits=1" {
					t.Fatalf("check %d: %s %q (%v); want allow after one delivery", i, v.Verdict, v.Reason, v.Err)
				}
			}
			other := checkInput(`{}`)
			other.Server = "web"
			if v := p.Check(context.Background(), other); v.Verdict != policy.Deny {
				t.Fatalf("an unlisted server: %s", v.Verdict)
			}
			if n := p.inits.Load(); n != 1 {
				t.Fatalf("%d deliveries, want 1", n)
			}
		})
	}
}
