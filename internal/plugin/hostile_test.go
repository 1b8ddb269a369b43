package plugin

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
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
		{"recurse", "deny", FaultTimeout, "timeout after 50ms"},
		{"calltree", "deny", FaultTimeout, "timeout after 50ms"},
		{"bulkloop", "deny", FaultTimeout, "timeout after 50ms"},
		{"membomb", "ask", FaultMemory, "memory limit 4 MiB exceeded"},
		{"trap", "deny", FaultTrap, "trap: wasm error: unreachable"},
		{"garbage", "abstain", FaultBadOutput, `bad output: not a JSON object: "not json {{{ at all"`},
		{"bigout", "deny", FaultOutputTooLarge, "output exceeds 64 KiB"},
		{"badptr", "deny", FaultTrap, "trap: output_write: [2147483632, +64) is outside guest memory (131072 bytes)"},
		{"errcode", "ask", FaultErrorCode, "error code 3 (internal error): internal error: kaboom"},
		{"exit", "deny", FaultExit, "exited with code 2"},
		{"badlabel", "deny", FaultBadOutput, `bad output: decision "maybe" is not allow, ask, deny or abstain`},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			// Only the guests that never end need a tight deadline; the
			// others get room for a loaded CI machine under -race.
			timeout, bound := 2000, 5*time.Second
			if tc.kind == FaultTimeout {
				timeout, bound = 50, 2*time.Second
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

// A Go guest spinning in a loop without calls is stopped at its deadline
// too: the Go compiler turns every jump into a branch to its function's
// loop header, which carries a check.
func TestGoGuestSpinIsInterrupted(t *testing.T) {
	rt := newRuntime(t, Options{})
	bin := buildGuest(t, "./testdata/gospin")
	p, err := FromBytes(context.Background(), rt, &config.Policy{Name: "hostile-gospin", TimeoutMs: 50}, bin)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		start := time.Now()
		v := p.Check(context.Background(), checkInput(`{"path":"BOOM"}`))
		var f *Fault
		if !errors.As(v.Err, &f) || f.Kind != FaultTimeout || v.Reason != `plugin "hostile-gospin": timeout after 50ms` {
			t.Fatalf("round %d: %+v", round, v)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("round %d: took %v", round, d)
		}
		if ok := p.Check(context.Background(), checkInput(`{"path":"/tmp/x"}`)); ok.Verdict != policy.Allow || ok.Code != "fine" {
			t.Fatalf("round %d: call after the timeout: %+v", round, ok)
		}
	}
}

// A guest that spins does not hold up the host's garbage collector (or any
// stop-the-world) until its deadline: compiled wasm cannot be preempted, so
// the instrumentation exits to Go every 1024 loop iterations, calls, or
// 64 KiB of bulk memory work (instrument.go). Without that, runtime.GC()
// would wait for the deadline, which itself needs a goroutine to fire, and
// the process would hang for good.
func TestSpinningGuestDoesNotBlockStopTheWorld(t *testing.T) {
	rt := newRuntime(t, Options{})
	guests := map[string][]byte{"gospin": buildGuest(t, "./testdata/gospin")}
	for _, name := range []string{"loop", "calltree", "bulkloop"} {
		guests[name] = readFile(t, filepath.Join("testdata", "hostile", name+".wasm"))
	}
	for name, bin := range guests {
		t.Run(name, func(t *testing.T) {
			const timeout = 3 * time.Second
			p, err := FromBytes(context.Background(), rt, &config.Policy{Name: "spin-" + name, TimeoutMs: int(timeout / time.Millisecond), MemoryLimitMB: 4}, bin)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			done := make(chan policy.PluginVerdict)
			go func() { done <- p.Check(context.Background(), checkInput(`{"path":"BOOM"}`)) }()
			time.Sleep(100 * time.Millisecond)
			gcStart := time.Now()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms) // stops the world as well
			if d := time.Since(gcStart); d > time.Second {
				t.Errorf("runtime.GC and ReadMemStats took %v while the guest spun", d)
			}
			v := <-done
			if v.Err == nil || time.Since(start) < timeout/2 {
				t.Errorf("the guest ended early (%v): %+v", time.Since(start), v)
			}
		})
	}
}

// buildGuest builds a Go guest package as the ABI asks.
func buildGuest(t testing.TB, pkg string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "guest.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, msg)
	}
	return readFile(t, out)
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
		{"badimport", `import "env.system" is not granted (granted: toolwarden.input_read, toolwarden.output_write, toolwarden.log, toolwarden.regex_compile, toolwarden.regex_match, toolwarden.regex_error, wasi_snapshot_preview1.*)`},
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
