package plugin

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// The C, Rust and AssemblyScript kits' data handlers, through real guests built with the
// kits' toolchains (testdata/kitdata): the data file arrives once per
// instance and decides.
func TestKitDataHandlersGetTheDataFileOnce(t *testing.T) {
	for _, kit := range kitBuilds("kitdata", "data") {
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
