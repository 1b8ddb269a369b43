package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// hookStartEvent is one PreToolUse event for an MCP tool: a write under
// /etc, which argguard denies.
const hookStartEvent = `{"session_id":"start","hook_event_name":"PreToolUse","tool_name":"mcp__fs__write_file","tool_input":{"path":"/etc/hosts","content":"x"}}`

const hookStartConfig = `
[apps.fs]
destructive_enabled = true
`

// hookStartTools is the --tools file: the tool's definition, so the hook
// reads no catalog.
const hookStartTools = `{"fs":[{"name":"write_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":false}}]}`

const hookStartArgguard = `
[policies.argguard]
builtin = "argguard"
config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }]
`

// buildStartBinaries builds toolwarden as the README installs it
// (CGO_ENABLED=0: a static binary), the same with cgo (what go install
// gives where a C compiler is found: dynamically linked to libc), and a
// hello-world Go program, the baseline every process start is compared
// with. TOOLWARDEN_START_BINARY measures another build instead of the
// first (and skips the cgo one).
func buildStartBinaries(tb testing.TB) (toolwarden, toolwardenCgo, hello string) {
	tb.Helper()
	dir := tb.TempDir()
	build := func(out, pkgDir string, pkgs []string, env ...string) {
		cmd := exec.Command("go", append([]string{"build", "-o", out}, pkgs...)...)
		cmd.Dir = pkgDir
		cmd.Env = append(os.Environ(), env...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("building %s: %v\n%s", filepath.Base(out), err, msg)
		}
	}
	toolwarden = os.Getenv("TOOLWARDEN_START_BINARY")
	if toolwarden == "" {
		toolwarden = filepath.Join(dir, "toolwarden")
		build(toolwarden, ".", []string{"."}, "CGO_ENABLED=0")
		toolwardenCgo = filepath.Join(dir, "toolwarden-cgo")
		build(toolwardenCgo, ".", []string{"."})
	}
	hdir := filepath.Join(dir, "hello")
	if err := os.MkdirAll(hdir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, text := range map[string]string{
		"go.mod":  "module hello\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
	} {
		if err := os.WriteFile(filepath.Join(hdir, name), []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	hello = filepath.Join(dir, "hello-bin")
	build(hello, hdir, []string{"."}, "GOFLAGS=", "GOWORK=off")
	return toolwarden, toolwardenCgo, hello
}

// hookRunner runs `toolwarden hook` for one event with its own config,
// state dir and cache dir (XDG_CACHE_HOME, where compiled plugins live).
type hookRunner struct {
	bin, config, tools, state, cache string
	coldCache                        bool     // a fresh, empty cache dir for every run
	extra                            []string // more hook flags (--warm)
	env                              []string // more variables
}

func newHookRunner(tb testing.TB, bin, policies string, cold, warm bool) *hookRunner {
	tb.Helper()
	dir := tb.TempDir()
	r := &hookRunner{bin: bin, config: filepath.Join(dir, "tw.toml"), tools: filepath.Join(dir, "tools.json"), state: filepath.Join(dir, "state"),
		cache: filepath.Join(dir, "cache"), coldCache: cold}
	if warm {
		// Every warm process these events start meets in a directory of
		// the test's own, and is stopped with it.
		rdv := shortTempDir(tb)
		tb.Cleanup(func() { stopWarmProcesses(tb, rdv) })
		r.env = append(r.env, warmDebugEnv+"=1", inbox.EnvRuntimeDir+"="+rdv)
		r.extra = append(r.extra, "--warm")
	}
	if err := os.WriteFile(r.config, []byte(hookStartConfig+policies), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(r.tools, []byte(hookStartTools), 0o600); err != nil {
		tb.Fatal(err)
	}
	out, err := r.run()
	if err != nil || !strings.Contains(string(out), `"permissionDecision":`) {
		tb.Fatalf("hook event: %v\n%s", err, out)
	}
	return r
}

func (r *hookRunner) run() ([]byte, error) {
	cache := r.cache
	if r.coldCache {
		d, err := os.MkdirTemp(r.cache+"-cold", "")
		if err != nil {
			if err := os.MkdirAll(r.cache+"-cold", 0o700); err != nil {
				return nil, err
			}
			if d, err = os.MkdirTemp(r.cache+"-cold", ""); err != nil {
				return nil, err
			}
		}
		defer os.RemoveAll(d)
		cache = d
	}
	args := append([]string{"hook", "--config", r.config, "--state-dir", r.state, "--tools", r.tools}, r.extra...)
	cmd := exec.Command(r.bin, args...)
	cmd.Stdin = strings.NewReader(hookStartEvent)
	cmd.Env = append(append(os.Environ(), "XDG_CACHE_HOME="+cache), r.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// timed runs f once and returns how long it took, failing on error.
func timed(tb testing.TB, f func() ([]byte, error)) time.Duration {
	start := time.Now()
	out, err := f()
	d := time.Since(start)
	if err != nil {
		tb.Fatalf("%v\n%s", err, out)
	}
	return d
}

// BenchmarkHookStart measures one `toolwarden hook` event, process start to
// decision printed, against a hello-world Go binary's start: every op runs
// hello world, then the hook, so each ratio is taken in the same round.
// x-hello is the median of those per-op ratios.
//
//   - argguard-warm: the plugin's compiled code in the disk cache, as
//     every hook event after the first finds it;
//   - argguard-warm-cgo: the same with toolwarden built with cgo, which a
//     dynamically linked binary pays for at every start;
//   - argguard-cold: an empty cache (the first event after an install);
//   - no-plugin: the config alone;
//   - argguard-warm-process: with --warm, decided by the warm process
//     the first event started (hookwarm.go), as every later event is:
//     the hook process only starts, relays the event and prints.
//
// TOOLWARDEN_START_BINARY measures another build of toolwarden.
func BenchmarkHookStart(b *testing.B) {
	tw, twCgo, hello := buildStartBinaries(b)
	helloRun := func() ([]byte, error) { return exec.Command(hello).CombinedOutput() }
	for _, c := range []struct {
		name, bin, policies string
		cold, warm          bool
	}{
		{"argguard-warm-process", tw, hookStartArgguard, false, true},
		{"argguard-warm", tw, hookStartArgguard, false, false},
		{"argguard-warm-cgo", twCgo, hookStartArgguard, false, false},
		{"no-plugin", tw, "", false, false},
		{"argguard-cold", tw, hookStartArgguard, true, false},
	} {
		if c.bin == "" {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			r := newHookRunner(b, c.bin, c.policies, c.cold, c.warm)
			if c.warm {
				r.startWarm(b)
			}
			var ratios []float64
			var hookSum, helloSum time.Duration
			b.ResetTimer()
			for range b.N {
				h := timed(b, helloRun)
				k := timed(b, r.run)
				helloSum += h
				hookSum += k
				ratios = append(ratios, float64(k)/float64(h))
			}
			sort.Float64s(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "x-hello")
			b.ReportMetric(float64(hookSum.Microseconds())/float64(b.N)/1000, "hook-ms")
			b.ReportMetric(float64(helloSum.Microseconds())/float64(b.N)/1000, "hello-ms")
		})
	}
}

// startWarm waits until an event of a warm runner is decided by the warm
// process an earlier one started (stopped when the test ends).
func (r *hookRunner) startWarm(tb testing.TB) {
	tb.Helper()
	for i := 0; ; i++ {
		out, err := r.run()
		if err != nil {
			tb.Fatalf("hook event: %v\n%s", err, out)
		}
		if _, ok := warmPID(out); ok {
			return
		}
		if i == 100 {
			tb.Fatalf("no event was decided by a warm process:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
