package plugin

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// The first-party Rust plugins declare their needs through the Rust kit
// (pdk/ABI.md section 14): the host then leaves everything else, the
// config included, out of their check envelopes, and each instance gets
// its config once, at init.
func TestFirstPartyPluginsDeclareTheirNeeds(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 1})
	for _, c := range []struct {
		name string
		want needs
	}{
		{"trifecta", needLabels | needCapabilities | needTool},
		{"argguard", needTool | needApp | needArguments | needServerContext},
		{"secrets", needLabels | needCapabilities | needTool | needArguments | needResult},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := loadBuiltin(t, rt, c.name, nil)
			if got := p.needs(); got != c.want {
				t.Errorf("needs %s, want %s", got, c.want)
			}
			if !p.wantsInit() {
				t.Error("describe does not list init: a fresh instance would never get its config")
			}
		})
	}
}

// A Rust kit plugin that declared needs without "config" is configured at
// init. A first event that brings no config (a host that skipped init)
// fails, rather than run on a config the user did not write: trifecta with
// mode = "deny" would otherwise ask.
func TestRustKitNeedsTheConfigBeforeItsFirstCheck(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t, Options{PoolSize: 1})
	p, err := Load(ctx, rt, &config.Policy{Name: "trifecta", Builtin: "trifecta", Config: map[string]any{"mode": "deny"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := p.Check(ctx, trifectaCall()); v.Verdict != policy.Deny {
		t.Fatalf("through the pool (init first): %s (%v), want deny", v.Verdict, v.Err)
	}
	in, err := p.newInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer in.close()
	env := in.appendCheck(nil, trifectaCall())
	if _, code, f := in.call(ctx, EventCheck, env); f != nil || code != CodeInternal {
		t.Fatalf("a check before init: code %d, fault %v; want %d (internal)", code, f, CodeInternal)
	}
}

// The C kit declares needs too: a guest built with it
// (testdata/guestneeds/needs.c) names only "tool", gets its config at
// init, and fails a check that comes before any config.
func TestCKitDeclaresNeeds(t *testing.T) {
	cc := requireTool(t, "clang")
	out := filepath.Join(t.TempDir(), "needs.wasm")
	run(t, exec.Command(cc, "--target=wasm32", "-Os", "-mbulk-memory", "-nostdlib", "-Wall", "-Wextra", "-Werror",
		"-Wl,--no-entry", "-Wl,--strip-debug", "-o", out, "testdata/guestneeds/needs.c"))
	ctx := context.Background()
	rt := newRuntime(t, Options{PoolSize: 1})
	p, err := FromBytes(ctx, rt, &config.Policy{Name: "needs", Config: map[string]any{"blocked_tool": "write_file"}}, readFile(t, out))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := p.needs(); got != needTool || !p.wantsInit() {
		t.Fatalf("needs %s, init listed %v; want tool, and init", got, p.wantsInit())
	}
	c := checkInput(`{}`)
	if v := p.Check(ctx, c); v.Verdict != policy.Deny {
		t.Fatalf("check: %s (%v), want deny: the config came at init", v.Verdict, v.Err)
	}
	in, err := p.newInstance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer in.close()
	if _, code, f := in.call(ctx, EventCheck, in.appendCheck(nil, c)); f != nil || code != CodeInternal {
		t.Fatalf("a check before init: code %d, fault %v; want %d (internal)", code, f, CodeInternal)
	}
}
