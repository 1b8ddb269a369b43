package plugin

import (
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
)

// regexProbeWAT is a guest that hands the regex imports whatever a test
// sends it, in event 9: the input's first byte says which import, the rest
// is its argument; the output is the import's i32 result (little endian),
// then for 'e' the error text. Its _initialize tries regex_compile outside
// an event and keeps the result for 'i'.
const regexProbeWAT = `(module
  (import "toolwarden" "input_read" (func $input_read (param i32 i32) (result i32)))
  (import "toolwarden" "output_write" (func $output_write (param i32 i32) (result i32)))
  (import "toolwarden" "regex_compile" (func $compile (param i32 i32) (result i32)))
  (import "toolwarden" "regex_match" (func $match (param i32 i32 i32) (result i32)))
  (import "toolwarden" "regex_error" (func $error (param i32 i32) (result i32)))
  (memory (export "memory") 40)
  (global $init (mut i32) (i32.const 0))
  (data (i32.const 0) "{\"name\":\"probe\",\"version\":\"1.0.0\",\"events\":[]}")
  (data (i32.const 100) "abc")
  (func (export "toolwarden_abi_v1"))
  (func (export "_initialize")
    (global.set $init (call $compile (i32.const 100) (i32.const 3))))
  (func $out (param $v i32)
    (i32.store (i32.const 200) (local.get $v))
    (drop (call $output_write (i32.const 200) (i32.const 4))))
  (func (export "toolwarden_handle") (param $event i32) (param $len i32) (result i32)
    (local $op i32) (local $n i32)
    (if (i32.eqz (local.get $event))
      (then (drop (call $output_write (i32.const 0) (i32.const 46))) (return (i32.const 0))))
    (drop (call $input_read (i32.const 4096) (local.get $len)))
    (local.set $op (i32.load8_u (i32.const 4096)))
    (if (i32.eq (local.get $op) (i32.const 99)) ;; 'c' pattern
      (then (call $out (call $compile (i32.const 4097) (i32.sub (local.get $len) (i32.const 1))))))
    (if (i32.eq (local.get $op) (i32.const 109)) ;; 'm' handle(4) subject
      (then (call $out (call $match (i32.load (i32.const 4097)) (i32.const 4101) (i32.sub (local.get $len) (i32.const 5))))))
    (if (i32.eq (local.get $op) (i32.const 101)) ;; 'e' cap(4): n, then the text
      (then
        (local.set $n (call $error (i32.const 300) (i32.load (i32.const 4097))))
        (call $out (local.get $n))
        (drop (call $output_write (i32.const 300)
          (select (local.get $n) (i32.load (i32.const 4097)) (i32.lt_u (local.get $n) (i32.load (i32.const 4097))))))))
    (if (i32.eq (local.get $op) (i32.const 105)) ;; 'i': what _initialize got
      (then (call $out (global.get $init))))
    (if (i32.eq (local.get $op) (i32.const 111)) ;; 'o': a pattern outside memory
      (then (call $out (call $compile (i32.const 0xFFFFFF00) (i32.const 4096)))))
    (if (i32.eq (local.get $op) (i32.const 79)) ;; 'O': a subject outside memory
      (then (call $out (call $match (i32.const 1) (i32.const 0xFFFFFF00) (i32.const 4096)))))
    (if (i32.eq (local.get $op) (i32.const 69)) ;; 'E': error text outside memory
      (then (call $out (call $error (i32.const 0xFFFFFF00) (i32.const 4096)))))
    (i32.const 0)))
`

// watModule compiles WAT source with wat2wasm.
func watModule(t testing.TB, src string) []byte {
	t.Helper()
	wat2wasm := requireTool(t, "wat2wasm")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "m.wat"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(wat2wasm, filepath.Join(dir, "m.wat"), "-o", filepath.Join(dir, "m.wasm")).CombinedOutput(); err != nil {
		t.Fatalf("wat2wasm: %v\n%s", err, msg)
	}
	return readFile(t, filepath.Join(dir, "m.wasm"))
}

type regexProbe struct {
	t  *testing.T
	p  *Plugin
	in *instance
}

func newRegexProbe(t *testing.T, timeoutMs int) *regexProbe {
	t.Helper()
	rt := newRuntime(t, Options{PoolSize: 1})
	p, err := FromBytes(context.Background(), rt, &config.Policy{Name: "probe", TimeoutMs: timeoutMs}, watModule(t, regexProbeWAT))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	pr := &regexProbe{t: t, p: p}
	pr.fresh()
	return pr
}

// fresh replaces the probe's instance with a new one.
func (pr *regexProbe) fresh() {
	pr.t.Helper()
	if pr.in != nil {
		pr.in.close()
	}
	in, err := pr.p.newInstance(context.Background())
	if err != nil {
		pr.t.Fatal(err)
	}
	pr.in = in
	pr.t.Cleanup(in.close)
}

// raw runs one probe event; the fault is nil when it ran.
func (pr *regexProbe) raw(op byte, arg []byte) ([]byte, *Fault) {
	out, _, f := pr.in.call(context.Background(), 9, append([]byte{op}, arg...))
	return append([]byte(nil), out...), f
}

func (pr *regexProbe) result(op byte, arg []byte) int32 {
	pr.t.Helper()
	out, f := pr.raw(op, arg)
	if f != nil || len(out) < 4 {
		pr.t.Fatalf("probe %c %q: %q %v", op, arg, out, f)
	}
	return int32(binary.LittleEndian.Uint32(out))
}

func (pr *regexProbe) compile(pattern string) int32 { return pr.result('c', []byte(pattern)) }

func (pr *regexProbe) match(h int32, subject string) int32 {
	return pr.result('m', append(binary.LittleEndian.AppendUint32(nil, uint32(h)), subject...))
}

// errText is regex_error with a buffer of capacity c: the length it
// returned and the bytes it wrote.
func (pr *regexProbe) errText(c int) (int32, string) {
	pr.t.Helper()
	out, f := pr.raw('e', binary.LittleEndian.AppendUint32(nil, uint32(c)))
	if f != nil || len(out) < 4 {
		pr.t.Fatalf("regex_error: %q %v", out, f)
	}
	return int32(binary.LittleEndian.Uint32(out)), string(out[4:])
}

// Patterns compiled through the import match exactly as Go's regexp does,
// Unicode classes, case folding and invalid UTF-8 included, and a pattern
// Go refuses is refused with Go's own message.
func TestRegexImportMatchesAsGoRegexpDoes(t *testing.T) {
	pr := newRegexProbe(t, 5000)
	patterns := []string{``, `abc`, `^abc$`, `(?i)straße`, `\pL+\d`, `\p{Greek}`, `[\PN]`, `(?s)a.c`, `(?m)^b$`, `\bfoo\b`,
		`a{2,4}`, `(?U)a+?`, `\x{FFFD}`, `[[:alpha:]]`, `\Q.*\E`, `rm\s+-rf`, `(?i)\x{212a}`, `^.$`, `(a|b)*abb`}
	subjects := []string{"", "abc", "xABCx", "STRASSE", "straße", "é1", "λ", "ab\nb\nc", "foo bar", "aaaa", "\xff", "a\xffb",
		"\xe2\x82", ".*", "rm  -rf /", "k", "K", "\u212a", "日", "abb"}
	// Big matches read the subject through the deadline's reader: the same
	// answers.
	for _, direct := range []int{regexDirectWork, 0} {
		saved := regexDirectWork
		regexDirectWork = direct
		matchAll(t, pr, patterns, subjects)
		regexDirectWork = saved
	}
	for _, pat := range []string{`((`, `a**`, `\8`, `[z-a]`, `x{1001}`, "\xff(", `(?P<>a)`, `\p{Nope}`} {
		_, goErr := regexp.Compile(pat)
		if h := pr.compile(pat); h != -1 {
			t.Errorf("%q: handle %d, want -1 (Go refuses it: %v)", pat, h, goErr)
			continue
		}
		if n, msg := pr.errText(4096); msg != goErr.Error() || int(n) != len(msg) {
			t.Errorf("%q: regex_error %d %q, want Go's %q", pat, n, msg, goErr)
		}
	}
}

// matchAll compiles each pattern and matches it against each subject,
// expecting Go's answers.
func matchAll(t *testing.T, pr *regexProbe, patterns, subjects []string) {
	t.Helper()
	for _, pat := range patterns {
		h := pr.compile(pat)
		if h <= 0 {
			_, msg := pr.errText(4096)
			t.Fatalf("%q refused: %d %s", pat, h, msg)
		}
		want := regexp.MustCompile(pat)
		for _, s := range subjects {
			if got := pr.match(h, s); got != b2i(want.MatchString(s)) {
				t.Errorf("%q on %q: %d, Go says %v", pat, s, got, want.MatchString(s))
			}
		}
	}
}

func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// regex_error returns the whole text's length and writes no more than the
// guest's buffer holds, so a guest can size its buffer with a first call.
func TestRegexErrorWritesAtMostTheBuffer(t *testing.T) {
	pr := newRegexProbe(t, 5000)
	if n, msg := pr.errText(100); n != 0 || msg != "" {
		t.Errorf("before any refusal: %d %q, want 0", n, msg)
	}
	pr.compile(`((`)
	want := "error parsing regexp: missing closing ): `((`"
	if n, msg := pr.errText(5); int(n) != len(want) || msg != want[:5] {
		t.Errorf("cap 5: %d %q, want %d %q", n, msg, len(want), want[:5])
	}
	if n, msg := pr.errText(0); int(n) != len(want) || msg != "" {
		t.Errorf("cap 0: %d %q", n, msg)
	}
	if n, msg := pr.errText(-1); int(n) != len(want) || !strings.HasPrefix(msg, "error\x00") {
		t.Errorf("negative cap: %d %q, want nothing written", n, msg)
	}
}

// A pattern compiled in one event still matches in later events on that
// instance; a new instance starts with none, so a handle from another
// instance is refused there.
func TestRegexPatternsLiveForTheInstance(t *testing.T) {
	pr := newRegexProbe(t, 5000)
	h := pr.compile(`^x+$`)
	for i := 0; i < 3; i++ {
		if got := pr.match(h, "xxx"); got != 1 {
			t.Fatalf("event %d: %d, want 1", i, got)
		}
	}
	pr.fresh()
	if got := pr.match(h, "xxx"); got != -1 {
		t.Errorf("a handle on a fresh instance: %d, want -1 (no such pattern)", got)
	}
	if got := pr.compile(`y`); got != 1 {
		t.Errorf("the fresh instance's first handle: %d, want 1", got)
	}
}

// The bounds hold: 256 patterns per instance, 4 KiB per pattern, 65536
// instructions per program (counted repeats expanded, before compiling),
// and a handle that names no pattern is refused, never matched.
func TestRegexImportBoundsHold(t *testing.T) {
	pr := newRegexProbe(t, 5000)
	for _, c := range []struct {
		pattern string
		msg     string
	}{
		{strings.Repeat("a", 4097), "pattern of 4097 bytes, over the bound of 4096"},
		{strings.Repeat(`(?:x{1000}y{1000})`, 33), "pattern too large"},
		{strings.Repeat(`a{1000}`, 66), "pattern too large"},
	} {
		if h := pr.compile(c.pattern); h != -1 {
			t.Errorf("%.40q: handle %d, want -1", c.pattern, h)
		}
		if _, msg := pr.errText(4096); !strings.Contains(msg, c.msg) {
			t.Errorf("%.40q: %q, want it to say %q", c.pattern, msg, c.msg)
		}
	}
	if h := pr.compile(strings.Repeat("a", 4096)); h != 1 {
		t.Errorf("a pattern of exactly 4096 bytes: %d, want handle 1", h)
	}
	for _, h := range []int32{0, -1, 2, 1 << 30} {
		if got := pr.match(h, "a"); got != -1 {
			t.Errorf("handle %d: %d, want -1", h, got)
		}
	}
	for i := 2; i <= 256; i++ {
		if h := pr.compile("b"); h != int32(i) {
			t.Fatalf("pattern %d: handle %d", i, h)
		}
	}
	if h := pr.compile("b"); h != -2 {
		t.Errorf("pattern 257: %d, want -2", h)
	}
	if _, msg := pr.errText(4096); !strings.Contains(msg, "holds 256 patterns already") {
		t.Errorf("pattern 257: %q", msg)
	}
	if got := pr.match(256, "b"); got != 1 {
		t.Errorf("the 256th pattern: %d, want 1", got)
	}
}

// A pointer outside guest memory traps in each import, as in the others.
func TestRegexImportsTrapOnPointersOutsideMemory(t *testing.T) {
	pr := newRegexProbe(t, 5000)
	if h := pr.compile("a"); h != 1 {
		t.Fatal(h)
	}
	pr.compile("(") // so that regex_error has text to write
	for _, op := range []byte{'o', 'O', 'E'} {
		out, f := pr.raw(op, nil)
		if f == nil || f.Kind != FaultTrap || !strings.Contains(f.Error(), "outside guest memory") {
			t.Errorf("probe %c: %q %v, want a trap naming the pointer", op, out, f)
		}
		pr.fresh()
		pr.compile("a")
		pr.compile("(")
	}
}

// Outside toolwarden_handle (here from _initialize) regex_compile refuses
// with -3 and compiles nothing.
func TestRegexCompileOutsideAnEventIsRefused(t *testing.T) {
	pr := newRegexProbe(t, 5000)
	if got := pr.result('i', nil); got != -3 {
		t.Errorf("regex_compile in _initialize: %d, want -3", got)
	}
	if got := pr.compile("a"); got != 1 {
		t.Errorf("the first pattern compiled in an event: handle %d, want 1", got)
	}
}

// A slow match on a big subject ends with the event's deadline: the host
// looks at the deadline while it reads the subject, instead of holding the
// instance until the match ends (seconds for this pattern).
func TestRegexMatchEndsWithTheDeadline(t *testing.T) {
	pr := newRegexProbe(t, 50)
	h := pr.compile(`[ab]*a[ab]{300}c`)
	subject := strings.Repeat("ab", 400<<10)
	start := time.Now()
	out, f := pr.raw('m', append(binary.LittleEndian.AppendUint32(nil, uint32(h)), subject...))
	took := time.Since(start)
	if f == nil || f.Kind != FaultTimeout {
		t.Errorf("match: %q %v, want a timeout", out, f)
	}
	if took > time.Second {
		t.Errorf("the event took %v; the deadline is 50ms", took)
	}
}

// A module that imports a regex function with another signature, or a
// toolwarden function that does not exist, is refused at load, naming it.
func TestRegexImportWithTheWrongSignatureIsRefused(t *testing.T) {
	rt := newRuntime(t, Options{})
	for _, c := range []struct{ imp, want string }{
		{`(import "toolwarden" "regex_match" (func (param i32 i32) (result i32)))`,
			`import "toolwarden.regex_match" has signature (i32, i32) -> i32, want (i32, i32, i32) -> i32`},
		{`(import "toolwarden" "regex_free" (func (param i32)))`,
			`import "toolwarden.regex_free" is not granted`},
	} {
		bin := watModule(t, `(module `+c.imp+` (memory (export "memory") 1)
  (func (export "toolwarden_abi_v1")) (func (export "toolwarden_handle") (param i32 i32) (result i32) (i32.const 1)))`)
		_, err := FromBytes(context.Background(), rt, &config.Policy{Name: "bad"}, bin)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.imp, err, c.want)
		}
	}
}
