package plugin

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/host/policy"
)

// The hostile corpus (testdata/hostile/*.wat): each plugin behaves until its
// input contains "BOOM". Every fault must yield the policy's on_error verdict
// with a reason naming the plugin and the fault, in bounded time, and the
// next call to the same plugin must work.
func TestHostilePluginsFailClosedAndRecover(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 2})
	cases := []struct {
		file    string
		onError string
		kind    FaultKind
		reason  string
	}{
		{"loop", "deny", FaultTimeout, "timeout after 50ms"},
		{"membomb", "ask", FaultMemory, "memory limit 4 MiB exceeded"},
		{"trap", "deny", FaultTrap, "trap: wasm error: unreachable"},
		{"garbage", "abstain", FaultBadOutput, `bad output: not a JSON object: "not json {{{ at all"`},
		{"bigout", "deny", FaultOutputTooLarge, "output exceeds 64 KiB"},
		{"badptr", "deny", FaultTrap, "trap: output_write: [2147483632, +64) is outside guest memory (131072 bytes)"},
		{"errcode", "ask", FaultErrorCode, "error code 3 (internal error): internal error: kaboom"},
		{"recurse", "deny", FaultTrap, "stack overflow"},
		{"exit", "deny", FaultExit, "exited with code 2"},
		{"badlabel", "deny", FaultBadOutput, `bad output: decision "maybe" is not allow, ask, deny or abstain`},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			// Only the loop needs a tight deadline; the others get room for
			// a loaded CI machine under -race.
			timeout, bound := 2000, 5*time.Second
			switch tc.file {
			case "loop":
				timeout, bound = 50, time.Second
			case "recurse":
				// Recursion has no loop, so wazero's deadline checks never
				// run; the stack limit ends it (docs/plugins.md).
				bound = 20 * time.Second
			}
			pol := config.Policy{Name: "hostile-" + tc.file, OnError: tc.onError, TimeoutMs: timeout, MemoryLimitMB: 4}
			p, err := loadWasm(t, rt, pol, filepath.Join("testdata", "hostile", tc.file+".wasm"))
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			want, _ := policy.ParseVerdict(tc.onError)
			ctx := context.Background()
			for round := 0; round < 3; round++ {
				start := time.Now()
				v := p.Check(ctx, checkInput(`{"path":"BOOM"}`))
				if d := time.Since(start); d > bound {
					t.Errorf("round %d: took %v", round, d)
				}
				if v.Verdict != want || v.Err == nil {
					t.Fatalf("round %d: got %v err=%v, want %v with an error", round, v.Verdict, v.Err, want)
				}
				var f *Fault
				if !errors.As(v.Err, &f) || f.Kind != tc.kind {
					t.Errorf("round %d: fault %#v, want kind %v", round, v.Err, tc.kind)
				}
				if !strings.HasPrefix(v.Reason, `plugin "hostile-`+tc.file+`": `) || !strings.Contains(v.Reason, tc.reason) {
					t.Errorf("round %d: reason %q, want it to name the plugin and contain %q", round, v.Reason, tc.reason)
				}
				if v.Code != policy.CodePluginError {
					t.Errorf("code %q", v.Code)
				}
				// The next call works: the faulty instance was replaced.
				ok := p.Check(ctx, checkInput(`{"path":"/tmp/x"}`))
				if ok.Verdict != policy.Allow || ok.Err != nil || ok.Code != "fine" {
					t.Fatalf("round %d: call after the fault: %+v", round, ok)
				}
			}
		})
	}
}

// Plugins that break the ABI are refused at load, before any guest code
// runs (except inittrap, whose _initialize is the guest code that fails),
// and then answer every event with their on_error verdict.
func TestHostilePluginsRefusedAtLoad(t *testing.T) {
	rt := newRuntime(t, Options{})
	cases := []struct {
		file   string
		reason string
	}{
		{"inittrap", "instantiate: trap in _initialize: wasm error: unreachable"},
		{"nomarker", `missing ABI marker export "toolwarden_abi_v1" (is this a toolwarden plugin? see pdk/ABI.md)`},
		{"badimport", `import "env.system" is not granted (granted: toolwarden.input_read, toolwarden.output_write, toolwarden.log, wasi_snapshot_preview1.*)`},
		{"badsig", `export "toolwarden_handle" has signature (i64) -> i64, want (i32, i32) -> i32`},
		{"hugemem", "the module's memory starts at 128 MiB, over memory_limit_mb (64 MiB)"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			pol := config.Policy{Name: "bad-" + tc.file, OnError: "ask"}
			p, err := loadWasm(t, rt, pol, filepath.Join("testdata", "hostile", tc.file+".wasm"))
			if err == nil || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("load error %v, want %q", err, tc.reason)
			}
			if !strings.HasPrefix(err.Error(), `plugin "bad-`+tc.file+`": `) {
				t.Errorf("load error %q does not name the plugin", err)
			}
			for i := 0; i < 2; i++ {
				v := p.Check(context.Background(), checkInput(`{}`))
				if v.Verdict != policy.Ask || v.Err == nil || v.Reason != err.Error() {
					t.Errorf("check on a refused plugin: %+v", v)
				}
			}
			if o := p.Observe(context.Background(), &policy.ObserveInput{Tool: testTool}); o.Err == nil {
				t.Errorf("observe on a refused plugin: %+v", o)
			}
		})
	}
}

// The committed .wasm files (hostile corpus, test plugins, the conformance
// example) are what wat2wasm makes of their .wat sources.
func TestHostileCorpusIsBuiltFromSource(t *testing.T) {
	wat2wasm := requireTool(t, "wat2wasm")
	for _, dir := range []string{filepath.Join("testdata", "hostile"), filepath.Join("testdata", "wat"), filepath.Join("..", "..", "pdk", "testdata", "conformance")} {
		srcs, _ := filepath.Glob(filepath.Join(dir, "*.wat"))
		for _, src := range srcs {
			out := filepath.Join(t.TempDir(), "out.wasm")
			if msg, err := exec.Command(wat2wasm, src, "-o", out).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", src, err, msg)
			}
			got, _ := os.ReadFile(out)
			committed, err := os.ReadFile(strings.TrimSuffix(src, ".wat") + ".wasm")
			if err != nil || !bytes.Equal(got, committed) {
				t.Errorf("%s: the committed .wasm differs from wat2wasm's output; run: wat2wasm %s -o %s", src, src, strings.TrimSuffix(src, ".wat")+".wasm")
			}
		}
	}
}
