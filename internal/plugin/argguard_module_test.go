package plugin

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/config"

	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	pdk "github.com/toolwarden/toolwarden/pdk/go"
	"github.com/toolwarden/toolwarden/plugins/argguard"
)

// argguardTwins is one argguard config in the shipped module and in the
// Go reference (plugins/argguard).
type argguardTwins struct{ *moduleTwins }

// newArgguardTwins: host is builtin argguard loaded with no config.
func newArgguardTwins(t testing.TB, host *Plugin, cfg any) *argguardTwins {
	t.Helper()
	return &argguardTwins{newModuleTwins(t, host, "argguard", argguard.New(), cfg)}
}

// check runs a check of tool (in app) with raw JSON arguments.
func (a *argguardTwins) check(t testing.TB, tool, app, args string) (uint32, []byte) {
	t.Helper()
	c := checkInput(args)
	c.Tool, c.App = &hints.Tool{Name: tool, HashHex: testTool.HashHex}, app
	env := a.envelope(c)
	if !validJSON([]byte(args)) && args != "" {
		t.Fatalf("test arguments %q are not JSON: the host would send null", args)
	}
	return a.run(t, EventCheck, env)
}

// jsonRaw quotes s as a JSON string, escaping what JSON requires and
// keeping invalid UTF-8 as it is (a client may send it; the host passes
// arguments through).
func jsonRaw(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func rules(rs ...map[string]any) map[string]any {
	list := make([]any, len(rs))
	for i, r := range rs {
		list[i] = r
	}
	return map[string]any{"rules": list}
}

type rule = map[string]any

// The shipped argguard module (Rust, plugins/argguard/rust) and the Go
// reference (plugins/argguard) give the same return code and the same
// output bytes for rule configs, regexps of every syntax the module
// supports, path globs and bad configs, on envelopes the host builds.
func TestArgguardModuleMatchesGoReference(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 1})
	// A deadline for slow machines and -race: TestArgguardRegexIsLinear
	// holds the module to 250 ms.
	host, err := Load(context.Background(), rt, &config.Policy{Name: "argguard", Builtin: "argguard", TimeoutMs: 10000}, nil)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("rules", func(t *testing.T) {
		long := strings.Repeat("x", 119) + "日本" + strings.Repeat("y", 30)
		calls := []struct{ tool, app, args string }{
			{"write_file", "fs", `{"path":"/etc/passwd"}`},
			{"write_file", "fs", `{"path":"/etc"}`},
			{"write_file", "fs", `{"path":"/var/../etc/x"}`},
			{"write_file", "fs", `{"path":"//etc//hosts"}`},
			{"write_file", "fs", `{"path":"/etcetera"}`},
			{"write_file", "fs", `{"path":"/tmp/a","path":"/etc/x"}`},
			{"write_file", "fs", `{"pa\u0074h":"\/etc\/x"}`},
			{"write_file", "fs", `{"path":42}`},
			{"write_file", "fs", `{"path":["/tmp/a","/etc/b"]}`},
			{"write_file", "fs", `{"path":[]}`},
			{"write_file", "fs", `{"path":null}`},
			{"write_file", "fs", `[]`},
			{"write_file", "fs", `"path"`},
			{"write_file", "fs", ``},
			{"write_file", "other", `{"path":"x"}`},
			{"read_file", "fs", `{"path":"/etc/passwd"}`},
			{"bash", "fs", `{"command":"sudo rm -rf /"}`},
			{"bash", "fs", `{"command":"rm -r x"}`},
			{"bash", "fs", `{"command":["rm","-rf"]}`},
			{"bash", "fs", `{"command":["ls","rm  -rf /","rm -rf ~"]}`},
			{"bash", "fs", `{"command":"say \"hi\"\n\trm\t-rf\r\\ \u0001\u001f"}`},
			{"bash", "fs", `{"command":` + jsonRaw("rm -rf \xff\xfe caf\xc3\xa9 \xe2\x82") + `}`},
			{"bash", "fs", `{"command":` + jsonRaw("rm -rf "+long) + `}`},
			{"bash", "fs", `{"command":` + jsonRaw("rm -rf "+strings.Repeat("z", 112)) + `}`},
			{"bash", "fs", `{"command":` + jsonRaw("rm -rf "+strings.Repeat("z", 113)) + `}`},
			{"bash", "fs", `{"command":` + jsonRaw("rm -rf "+strings.Repeat("z", 114)) + `}`},
			{"bash", "fs", `{"command":` + jsonRaw("rm -rf "+strings.Repeat("z", 111)+"é") + `}`},
			{"bash", "fs", `{"command":` + jsonRaw("rm -rf "+strings.Repeat("x", 112)+"\xe2\x82\xac\xe2\x82") + `}`},
			{"bash", "fs", `{"command":"rm -rf \ud83d\ude00 \ud800 \udc00x"}`},
			{"bash", "fs", `{}`},
			{"x", "fs", `{"opts":[{"dir":"/tmp/a"}]}`},
			{"x", "fs", `{"opts":[{"dir":"/tmp/a/b"}]}`},
			{"x", "fs", `{"opts":[{"dir":"/tmp/../etc"}]}`},
			{"x", "fs", `{"opts":[{"dir":"/tmp/./a"}]}`},
			{"x", "fs", `{"opts":{"0":{"dir":"/tmp/a"}}}`},
			{"x", "fs", `{"opts":[{"dir":["/tmp/a","/tmp/b"]}]}`},
			{"x", "fs", `{"opts":[{"dir":["/tmp/a","/var/b"]}]}`},
			{"cp", "fs", `{"paths":["/tmp/a","/root/.ssh/id"]}`},
			{"cp", "fs", `{"paths":["/tmp/a","/tmp/b/../c"]}`},
			{"cp", "fs", `{"paths":["/tmp/a","/tmp/../root"]}`},
			{"cp", "fs", `{"paths":["/tmp/a",7,true,null,{"k":"/tmp/x"},["/tmp/y"]]}`},
			{"http_get", "web", `{"options":{"url":"http://example.com"}}`},
			{"http_set", "wxyzb", `{"options":{"url":"http://example.com"}}`},
			{"http_get", "webs", `{"options":{"url":"http://example.com"}}`},
			{"http_get", "web", `{"options":{"url":"https://example.com"}}`},
			{"http_gets", "web", `{"options":{"url":"http://example.com"}}`},
			{"t", "a", `{"a/b":{"c~d":"xyz"},"list":["a","b","c"]}`},
			{"t", "a", `{"list":[],"n":42,"b":true,"obj":{"k":"v","n":[1,2]},"nul":null}`},
			{"t", "a", `{"n":-0,"m":1e5,"f":1.50,"b":false,"obj":{},"nul":"null"}`},
			{"t", "a", `{"été":"x","\u00e9t\u00e9":"y","` + "\xff" + `":"z","":"empty"}`},
			{"t", "a", `{"nested":{"deep":[{"x":"1"},{"x":"2"}]},"list":["z","y"]}`},
			{"t", "a", `{"list":{"+1":"q","-0":"z","01":"w"}}`},
			{"weird\ttool \"name\"", "app\\x", `{"path":"/etc/x"}`},
			{"", "", `{"path":"/etc/x","command":"rm -rf /"}`},
			{"café", "日本", `{"path":"/etc/x"}`},
		}
		for _, cfg := range []map[string]any{
			rules(),
			rules(
				rule{"tool": "write_*", "arg": "path", "deny_glob": "/etc/**"},
				rule{"tool": "*", "arg": "command", "ask_regex": `rm\s+-rf`},
				rule{"tool": "*", "arg": "/opts/0/dir", "allow_glob": "/tmp/*", "code": "tmp_ok", "reason": "temporary files are fine"},
				rule{"app": "other", "arg": "path", "deny_glob": "**"},
				rule{"tool": "cp", "arg": "paths", "deny_glob": "/root/**"},
			),
			rules(
				rule{"tool": "cp", "arg": "paths", "allow_glob": "/tmp/**"},
				rule{"tool": "http_?et", "app": "w*b", "arg": "/options/url", "deny_regex": `^http://`, "code": "plain_http"},
				rule{"arg": "/a~1b/c~0d", "ask_regex": "y", "reason": "tilde \"quoted\"\n"},
				rule{"arg": "/list/+1", "allow_regex": "."},
				rule{"arg": "path", "allow_glob": "/etc/*", "code": "a.b:c-d_e9"},
			),
			rules(
				rule{"arg": "/list/-0", "deny_regex": "^[az]$"},
				rule{"arg": "/list/01", "deny_regex": "."},
				rule{"arg": "n", "ask_regex": `^4\d$`},
				rule{"arg": "b", "ask_regex": "^(true|false)$"},
				rule{"arg": "obj", "allow_regex": `"k":|^\{\}$`},
				rule{"arg": "nul", "allow_regex": "null"},
				rule{"arg": "m", "allow_regex": "^1e5$"},
				rule{"arg": "f", "allow_regex": `^1\.50$`},
			),
			rules(
				rule{"arg": "été", "ask_glob": "*"},
				rule{"arg": "\ufffd", "deny_regex": "."},
				rule{"arg": "/", "ask_regex": "."},
				rule{"arg": "/nested/deep/1/x", "deny_regex": "2"},
				rule{"arg": "/opts/0/dir/1", "deny_glob": "/var/*"},
				rule{"arg": "command", "allow_regex": `(?s).`, "tool": "*sh", "app": "?s"},
				rule{"arg": "path", "ask_glob": "/etc/*", "tool": "weird*", "app": `app\x`},
			),
			rules(
				rule{"arg": "command", "deny_regex": `\xff|\x{fffd}`},
				rule{"arg": "command", "ask_regex": `(?i)RM -RF`},
				rule{"arg": "paths", "ask_glob": "/tmp/?"},
			),
		} {
			a := newArgguardTwins(t, host, cfg)
			for _, c := range calls {
				a.check(t, c.tool, c.app, c.args)
			}
			a.close()
		}
	})

	t.Run("regexps", func(t *testing.T) {
		n := 0
		for _, pat := range argguardRegexps {
			if _, err := regexp.Compile(pat); err != nil {
				t.Fatalf("%q: %v", pat, err)
			}
			a := newArgguardTwins(t, host, rules(rule{"arg": "v", "ask_regex": pat}))
			for _, s := range argguardSubjects {
				if code, _ := a.check(t, "t", "a", `{"v":`+jsonRaw(s)+`}`); code != pdk.CodeOK {
					t.Fatalf("%q refused", pat)
				}
				n++
			}
			a.close()
		}
		t.Logf("%d patterns × %d subjects", len(argguardRegexps), len(argguardSubjects))
	})

	t.Run("globs", func(t *testing.T) {
		for _, g := range argguardGlobs {
			for _, kind := range []string{"deny_glob", "allow_glob"} {
				a := newArgguardTwins(t, host, rules(rule{"arg": "p", kind: g}))
				for _, s := range argguardPaths {
					a.check(t, "t", "a", `{"p":`+jsonRaw(s)+`}`)
				}
				a.close()
			}
		}
	})

	// Path globs resolved against the server's context (plugins/argguard
	// resolve.go): every context shape the host writes, every kind of path.
	t.Run("paths in context", func(t *testing.T) {
		n := 0
		seen := []*struct {
			what string
			n    int
		}{{what: `(resolved: `}, {what: `(unresolved: the server's working directory`}, {what: `(unresolved: the server's home`},
			{what: `(unresolved: another user's`}, {what: `(unresolved: a file URI`}, {what: `"decision":"allow"`},
			{what: `"arguments":["q"]`}}
		for _, g := range argguardContextGlobs {
			for _, kind := range []string{"deny_glob", "ask_glob", "allow_glob"} {
				a := newArgguardTwins(t, host, rules(rule{"arg": "p", kind: g}, rule{"arg": "q", kind: g}))
				for _, x := range argguardContexts {
					for _, s := range argguardContextPaths {
						c := checkInput(`{"p":` + jsonRaw(s) + `,"q":[` + jsonRaw(s) + `,"/a"]}`)
						c.Tool, c.Context = &hints.Tool{Name: "t", HashHex: testTool.HashHex}, x
						_, out := a.run(t, EventCheck, a.envelope(c))
						for _, w := range seen {
							w.n += bytes.Count(out, []byte(w.what))
						}
						n++
					}
				}
				a.close()
			}
		}
		t.Logf("%d checks", n)
		for _, w := range seen {
			if w.n == 0 {
				t.Errorf("no output holds %s: the cases miss it", w.what)
			}
		}
	})

	t.Run("bad configs", func(t *testing.T) {
		for _, cfg := range argguardBadConfigs {
			a := newArgguardTwins(t, host, cfg)
			if code, _ := a.check(t, "t", "a", `{}`); code != pdk.CodeBadConfig {
				t.Errorf("config %s: accepted", a.cfg)
			}
			a.close()
		}
		for _, pat := range argguardBadRegexps {
			if _, err := regexp.Compile(pat); err == nil {
				t.Fatalf("%q: Go accepts it", pat)
			}
			a := newArgguardTwins(t, host, rules(rule{"arg": "v", "ask_regex": pat}))
			a.check(t, "t", "a", `{"v":"x"}`)
			a.close()
		}
	})

	// Patterns Go accepts past the host's bounds (pdk/ABI.md section 16)
	// refuse the plugin at load, saying which bound.
	t.Run("over the host's bounds", func(t *testing.T) {
		for _, pat := range argguardOverBounds {
			if _, err := regexp.Compile(pat.pattern); err != nil {
				t.Fatalf("%.40q: %v", pat.pattern, err)
			}
			for _, kind := range []string{"deny_regex", "allow_regex"} {
				a := newArgguardTwins(t, host, rules(rule{"arg": "v", "deny_glob": "x"}, rule{"arg": "v", kind: pat.pattern}))
				env := a.envelope(checkInput(`{"v":"x"}`))
				out, code, f := a.in.call(context.Background(), EventCheck, env)
				want := "rules[1]." + kind + ": " + pat.message
				if f != nil || code != pdk.CodeBadConfig || string(out) != want {
					t.Errorf("%.40q: %d %q %v, want %q", pat.pattern, code, out, f, want)
				}
				a.close()
			}
		}
		// Each glob and regex rule holds one of the instance's 256 patterns.
		many := make([]map[string]any, 257)
		for i := range many {
			many[i] = rule{"arg": "v", "deny_glob": fmt.Sprintf("/p%d/**", i)}
		}
		a := newArgguardTwins(t, host, rules(many...))
		out, code, f := a.in.call(context.Background(), EventCheck, a.envelope(checkInput(`{"v":"x"}`)))
		if want := "rules[256].deny_glob: regex_compile: this instance holds 256 patterns already"; f != nil ||
			code != pdk.CodeBadConfig || !strings.HasPrefix(string(out), want) {
			t.Errorf("257 rules: %d %q %v, want %q...", code, out, f, want)
		}
		a.close()
	})
}

// Patterns that take a backtracking matcher exponential time are answered
// in time linear in the subject, with the Go reference's verdict, under a
// 250 ms deadline: the slowest takes about 10 ms here, and a backtracker
// would need longer than the age of the universe for most of these.
func TestArgguardRegexIsLinear(t *testing.T) {
	rt := newRuntime(t, Options{})
	ctx := context.Background()
	x, a := strings.Repeat("x", 20<<10), strings.Repeat("a", 20<<10)
	for _, c := range []struct {
		pattern, subject string
		want             policy.Verdict
	}{
		{`(a*)*b`, a, policy.Abstain},
		{`(x+x+)+y`, x, policy.Abstain},
		{`(x+x+)+y`, x + "y", policy.Ask},
		{`^(a|a?)+$`, a + "!", policy.Abstain},
		{`(?:a|aa)*c`, a, policy.Abstain},
		{`^(\w+\s?)*$`, x + "!", policy.Abstain},
		{`(.*a){20}`, x, policy.Abstain},
		{`(?i)(?:x{1,3}){1,5}y`, x, policy.Abstain},
		{`\b(?:x|xx)+\B\b`, x, policy.Abstain},
	} {
		p, err := Load(ctx, rt, &config.Policy{Name: "ag", Builtin: "argguard", TimeoutMs: 250,
			Config: rules(rule{"arg": "v", "ask_regex": c.pattern})}, nil)
		if err != nil {
			t.Fatal(err)
		}
		args := `{"v":"` + c.subject + `"}`
		v := p.Check(ctx, checkInput(args))
		if v.Err != nil || v.Verdict != c.want {
			t.Errorf("%s on %d bytes: %v %v, want %v", c.pattern, len(c.subject), v.Verdict, v.Err, c.want)
		}
		_, ref := argguard.New().Handle(pdk.EventCheck, []byte(`{"call":{"arguments":`+args+`},"plugin":{"config":`+
			mustJSON(t, rules(rule{"arg": "v", "ask_regex": c.pattern}))+`}}`))
		if want := `"decision":"` + c.want.String() + `"`; !strings.Contains(string(ref), want) {
			t.Errorf("%s: the reference says %.60s, want %s", c.pattern, ref, want)
		}
	}
}

// The same for path globs (deny and allow), whose translation to regexps
// and path cleaning the module reimplements.
func FuzzArgguardGlobMatchesGo(f *testing.F) {
	for i, g := range argguardGlobs {
		f.Add(g, argguardPaths[i%len(argguardPaths)])
		f.Add("!"+g, argguardPaths[(i+7)%len(argguardPaths)])
	}
	fuzzArgguard(f, "deny_glob")
}

// The same for path globs resolved against a server context: a cwd, a
// home and a root (each "" for unknown), and a path, under a deny (or, with
// a leading '!', an allow) glob.
func FuzzArgguardPathsMatchGo(f *testing.F) {
	for i, p := range argguardContextPaths {
		x := argguardContexts[i%len(argguardContexts)]
		var cwd, home, root string
		if x != nil {
			cwd, home = x.Cwd, x.Home
			if len(x.Roots) > 0 {
				root = x.Roots[0]
			}
		}
		g := argguardContextGlobs[i%len(argguardContextGlobs)]
		if i%2 == 1 {
			g = "!" + g
		}
		f.Add(g, p, cwd, home, root)
	}
	rt := newRuntime(f, Options{PoolSize: 1})
	host, err := Load(context.Background(), rt, &config.Policy{Name: "argguard", Builtin: "argguard", TimeoutMs: 20000}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, pattern, subject, cwd, home, root string) {
		if !utf8.ValidString(pattern) {
			t.Skip("configs are UTF-8 (TOML, then JSON)")
		}
		kind := "deny_glob"
		if p, ok := strings.CutPrefix(pattern, "!"); ok {
			pattern, kind = p, "allow_glob"
		}
		a := newArgguardTwins(t, host, rules(rule{"arg": "v", kind: pattern}))
		defer a.close()
		c := checkInput(`{"v":` + jsonRaw(subject) + `}`)
		c.Context = &policy.ServerContext{Cwd: cwd, Home: home}
		if root != "" {
			c.Context.Roots = []string{root}
		}
		a.run(t, EventCheck, a.envelope(c))
	})
}

// fuzzArgguard runs (pattern, subject) through both with one rule of kind;
// a pattern starting with '!' makes an allow rule instead.
func fuzzArgguard(f *testing.F, kind string) {
	rt := newRuntime(f, Options{PoolSize: 1})
	host, err := Load(context.Background(), rt, &config.Policy{Name: "argguard", Builtin: "argguard", TimeoutMs: 20000}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, pattern, subject string) {
		if !utf8.ValidString(pattern) {
			t.Skip("configs are UTF-8 (TOML, then JSON)")
		}
		k := kind
		if p, ok := strings.CutPrefix(pattern, "!"); ok {
			pattern, k = p, "allow"+kind[strings.IndexByte(kind, '_'):]
		}
		a := newArgguardTwins(t, host, rules(rule{"arg": "v", k: pattern}))
		defer a.close()
		env := a.envelope(checkInput(`{"v":` + jsonRaw(subject) + `}`))
		got, code, fault := a.in.call(context.Background(), EventCheck, env)
		if fault != nil {
			t.Fatalf("%s %q on %q: the module failed: %v", k, pattern, subject, fault)
		}
		wantCode, want := a.ref.Handle(pdk.EventCheck, env)
		if code == wantCode && bytes.Equal(got, want) {
			return
		}
		t.Fatalf("%s %q on %q:\nmodule    %d %q\nreference %d %q", k, pattern, subject, code, got, wantCode, want)
	})
}

// goArgguard is argguard's Go reference built as a Go guest
// (testdata/goargguard), once per test binary, for the tests that need a
// real Go guest now that the shipped argguard is Rust.
func goArgguard(t testing.TB) []byte {
	t.Helper()
	goArgguardOnce.Do(func() { goArgguardBin = buildGuest(t, "./testdata/goargguard") })
	if goArgguardBin == nil {
		t.Fatal("testdata/goargguard did not build")
	}
	return goArgguardBin
}

var (
	goArgguardOnce sync.Once
	goArgguardBin  []byte
)

// Regexps of every syntax the module supports (all valid in Go).
var argguardRegexps = []string{
	``, `abc`, `a.c`, `(?s)a.c`, `^abc$`, `^`, `$`, `^$`, `(?m)^b$`, `(?m)a$`, `(?m)^$`, `(?m:^)x`,
	`\Aab`, `ab\z`, `\A\z`, `\bfoo\b`, `\Bo\B`, `\b`, `\B`, `x\b`, `é\b`, `\bé`,
	`foo|bar|baz`, `ab|ac|ad`, `a(b|c)d`, `|a`, `a|`, `a||b`, `(|a)+`, `()`, `(a)(b)`, `(?:)`, `(?:a|)b`,
	`a*`, `a+b`, `a?b`, `a*?b`, `a+?`, `a??b`, `(?U)a+`, `(?U)a+?`, `a{3}`, `a{2,}`, `a{2,4}b`, `^a{2,4}$`, `a{0}b`,
	`a{0,2}c`, `^a{0,2}c`, `a{1}`, `a{1,1}`, `a{0,}`, `a{1,}?`, `(?:ab){2,3}`, `^(?:ab){2,3}$`, `(ab)*c`,
	`(a|b)*abb`, `(?:a{2}){3}`, `^(?:a{2}){3}$`, `^(?:a?){5}a{5}$`, `(a*)*b`, `(a*)+`, `(a|aa)+$`, `(?:x+x+)+y`, `^(a+)+$`,
	`(?:(?:a{10}){10}){10}`, `a{1000}`, `(?:a{0}){1000}`, `^(?:|a){3}$`, `(?:^|,)x(?:,|$)`, `^*a`, `\b+x`, `$*`,
	`[abc]`, `[^abc]`, `[a-z]+`, `^[a-z]+$`, `[^a-z\n]`, `[a-]`, `[-a]`, `[]a]`, `[^]a]`, `[\]]`, `[\-x]`, `[a-a]`,
	`[\x00-\x{10FFFF}]`, `[^\x00-\x{10FFFF}]`, `[^\n]`, `[.]`, `[\\]`, `[[]`, `[a-c-e]`, `[---]`, `[\^]`, `[:alpha:]`,
	`\d+`, `\D`, `\s`, `\S+`, `\w+`, `\W`, `[\d\s]`, `[^\w]`, `[\D]`, `[^\D]`, `[\W\d]`, `[\d-z]`,
	`[[:alpha:]]+`, `[[:^digit:]]`, `[[:space:][:punct:]]`, `[[:word:]]`, `[[:xdigit:]]{2}`, `[[:alnum:][:ascii:]]`,
	`[[:blank:]]`, `[[:cntrl:]]`, `[[:graph:]]`, `[[:lower:]]`, `[[:print:]]`, `[[:upper:]]`, `[^[:^alpha:]]`,
	`\t\n\r\f\v\a`, `[\t\n\r\f\v\a]`, `\x41`, `\x61\x62`, `\x{263a}`, `\x{10FFFF}`, `\x{0}`, `\101`, `\0`, `\07`, `\018`, `\1234`,
	`[\101-\132]`, `[\x{100}-\x{17f}]`, `\Q.*+?\E`, `\Qa\Eb*`, `\Q\E`, `a\Q\E*`, `\Qab`, `(?i)\Qab`, `\Q\\E`, `\.\+\*\?\(\)\|\[\]\{\}\^\$\\`,
	`\_`, `\ `, `\-`, `\#`, `\<`, `\>`, `\~`, `\'`, `\"`, `\/`, `\,`, `\!`, `\@`, `\%`, `\&`, `\=`, `\:`, `\;`, "\\`",
	`(?i)abc`, `(?i)k`, `(?i)s`, `(?i)[k]`, `(?i)[^k]x`, `(?i)\w`, `(?i)\W`, `(?i)[[:upper:]]`, `(?i)[[:^lower:]]`, `(?i)ǅ`,
	`(?i)σ`, `(?i)[α-ω]`, `(?i)[^α-ω]`, `(?i)é`, `(?i)[a-z]+`, `(?i)[k-s]`, `(?i)ß`, `(?i)ﬀ`, `(?i)ϴ`, `(?i)\x{212a}`, `(?i)[\x{100}-\x{17f}]`,
	`(?i:a)b`, `a(?i)b`, `(?i)a(?-i)b`, `(?i)(?-i:a)B`, `(a(?i)b)c`, `(?sm)^.$`, `(?-s).`, `(?s-m:^.)`, `(?ims-U)a`, `(?)`, `(?i)`,
	`(?P<name>x)`, `(?<n>y)z`, `(?P<a1_>x)`, `x{2}{`, `a{,3}`, `a{1001`, `{`, `}`, `{}`, `a{01}`, `a{1,02}`, `a{x}`, `x{2,`, `{2`,
	`.`, `..`, `^.{3}$`, `^\w{2,5}$`, `^..$`, `^.$`, `^...$`,
	`\x{FFFD}`, `[\x{FFFD}]`, `^\x{FFFD}+$`, `é`, `日本`, `[日本]`, `[^日]`, `^[^a]$`, `☺+`, `[☺-☻]`,
	`\x{D800}`, `[\x{D7FF}-\x{E000}]`, `\x00`, `[^\x00]`,
	`\pL`, `x\p{Greek}+`, `[\PN]`, `(?i)\p{^Lu}`, `\p{Han}+`, `[^\p{L}\p{N}]`,
	`rm\s+-rf`, `^(?:https?|ftp)://[^/\s]+/`, `(?i)^(?:sudo\s+)?rm\s+(?:-\w*[rf]\w*\s+)+/`, `[;&|]\s*curl\b`,
	`^[\w.+-]+@[\w-]+\.[\w.-]+$`, `\$\{[^}]*\}`, `(?:\d{1,3}\.){3}\d{1,3}`,
}

// Subjects for the regexps: escapes, Unicode, invalid UTF-8, long strings.
var argguardSubjects = []string{
	"", "a", "b", "ab", "abc", "ABC", "aBc", "xabcx", "aaaa", "aa", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aab", "abb", "abab", "ba",
	"ab\nab", "\n", "a\n", "\na", "a\nb\nc", "\r\n", "foo bar", "foobar", "foo", "x foo.", "bar", "k", "K", "\u212a", "s", "S",
	"\u017f", "é", "É", "eé", "日本語", "本", "σ", "Σ", "ς", "ǅ", "ǆ", "Ǆ", "ß", "ẞ", "ﬀ", "θ", "ϴ", "ϑ", "\xff", "a\xffb",
	"\xe2\x82", "\xe2\x82\xac", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\x00", "\x07\t\n\v\f\r", "tab\there",
	"1234", "x-y_z", "rm -rf /", "sudo rm  -fr /etc", "a.b", "*+?", "[]{}", ".*+?()|[]{}^$\\", "\uFFFD", "☺☻",
	"Ā", "ā", "ſ", "xyz", "xxy", "xxxxxxxxxxy", "a{3}", "{2", "x{2}{", "a{,3}", "AZaz09_", "~`!@#", "\x7f",
	"https://example.com/x", "ftp://h/", "me@example.com", "10.0.0.1", "${HOME}", "; curl x", "\\", `"quoted"`,
	strings.Repeat("ab", 100), strings.Repeat("x", 3000) + "y", strings.Repeat("a", 1001), strings.Repeat("é", 300),
}

// Path globs, including odd classes that Go cannot compile (they then
// match literally).
var argguardGlobs = []string{
	"/etc/**", "/home/*/.ssh/*", "**/*.pem", "*.pem", "file?.txt", "[abc].go", "[!abc].go", `\*.go`, "a.b", "[unclosed",
	"/tmp/**", "**", "*", "", "/", "[a-]", "[]]", "[!]x]", "[z-a]", "[[:alpha:]]", `[\]`, "é?", "?", "/a/**/b", "**/", `\`,
	`a\`, "[^a]b", "/**", "/x/**/", "[.]", "(x)", "a+b", "{a,b}", "$HOME", "^x", "[[:alpha:]", "[]", "[!]", "[:alpha:]",
	`[\d]`, "***", "/etc/*/", "?.?", "[é-ü]", "[---]", "a**b", "//x", "./a", "../*",
}

var argguardPaths = []string{
	"/etc", "/etc/", "/etc/passwd", "/etcx", "/tmp/../etc/passwd", "//etc//hosts", "/etc/a\nb", ".", "", "..", "a/../..", "/..",
	"file1.txt", "file/.txt", "b.go", "d.go", "*.go", "a.go", "[unclosed", "é1", "éé", "\xff", "/home/me/.ssh/id",
	"/home/a/b/.ssh/id", "a.b", "axb", "x/y", "/a/b/c.pem", "c.pem", "/a/c.pem", "a+b", "(x)", "]", "x", "-", "/tmp/a/../../etc",
	"/tmp/./x", "/tmp/", "/tmp", "/a/x/y/b", "/a/b", "$HOME", "{a,b}", "\\", "a\\", "/x/y/", "a", "[z-a]", "[]", "[!]", ":",
	"\\d", "d", "//x", "./a", "../a", "x/.", "x/..", "/./", "ü", "é", "/\xff/..", strings.Repeat("/a", 200),
}

// Server contexts: none, empty, known, with roots and command-line
// directories, odd (relative, dotted, escaped, non-ASCII) and partial.
var argguardContexts = []*policy.ServerContext{
	nil, {},
	{Cwd: "/srv/app", Home: "/home/me"},
	{Cwd: "/srv/app", Home: "/home/me", Roots: []string{"/data", "rel", "/data/./x/.."}, ArgDirs: []string{"/opt/s", "/srv/app"}},
	{Cwd: "srv/app", Home: "~"},
	{Cwd: "/", Home: "/"},
	{Cwd: "/a/../srv//app/", Home: "/home/me/"},
	{Cwd: "/sr\"v/\\app\n", Home: "/hôme/日本"},
	{Home: "/home/me", Roots: []string{"/data"}},
	{Cwd: "/home/me/src", Home: "/home/me/"},
	{Cwd: "/srv/app"},
	{Roots: []string{"/data"}, ArgDirs: []string{"/opt/s"}},
}

// Paths of every kind a server resolves: absolute, relative, dotted, "~"
// forms, file URIs, and the odd.
var argguardContextPaths = []string{
	"/srv/app/secret/x", "/srv/app/pub/../secret/x", "secret/rel.txt", "./secret/rel2.txt", "../app/secret/x",
	"../../secret/x", "secret", "pub/a", "", ".", "..", "./", "~", "~/", "~/x", "~/../me/.ssh/id", "~/../../srv/app/secret/t",
	"~root/x", "~root", "~~", "file:///srv/app/secret/x", "FILE://localhost/srv/app/%73ecret/x", "file:///srv/app/secret?x#y",
	"file://evil/x", "file:///a%zz", "file:///a%4", "file://", "file:", "file:///", "file://localhostx/a", "/", "//srv//app/secret",
	"/home/me", "/home/me/.ssh/id", "/home/mel/x", "/home/other/../me/secret/x", "../.ssh/id", "/hôme/日本/x", "/etc/passwd",
	"a/../../..", "\xff/secret", "sécret/日本", "secret/\"q\"\\", strings.Repeat("a/", 80) + "secret",
}

// Globs for resolved paths: under each base, under the home, anywhere,
// exact, relative.
var argguardContextGlobs = []string{
	"/srv/app/secret/**", "/srv/app/**", "/data/secret/**", "/opt/s/**", "/home/me/**", "/home/me", "/srv/app", "/**", "**",
	"*", "secret/*", "/srv/app/secret", "/sr\"v/**", "/hôme/日本/**", "/a%zz", "/srv/app/file:/**",
	"~/**", "~/.ssh/*", "~", "~/", "~/../**", "~/../../srv/app/secret/**", "~*", "~root/**", "~/secret/**",
}

var argguardBadConfigs = []map[string]any{
	{"rules": map[string]any{}}, {"rules": []any{1}}, {"rules": []any{"x"}}, {"rules": []any{[]any{}}},
	{"rules": []any{map[string]any{}}}, {"rules": "x"}, {"rule": []any{}}, {"rules": []any{}, "x": 1},
	rules(rule{"arg": "a"}), rules(rule{"deny_glob": "x"}), rules(rule{"arg": "", "deny_glob": "x"}),
	rules(rule{"arg": 1, "deny_glob": "x"}), rules(rule{"arg": "a", "deny_glob": 1}), rules(rule{"arg": "a", "deny_regex": nil}),
	rules(rule{"arg": "a", "tool": true, "deny_glob": "x"}), rules(rule{"arg": "a", "app": []any{}, "deny_glob": "x"}),
	rules(rule{"arg": "a", "deny_glob": "x", "ask_glob": "y"}), rules(rule{"arg": "a", "allow_regex": "x", "deny_regex": "y"}),
	rules(rule{"arg": "a", "deny_globs": "x"}), rules(rule{"arg": "a", "Tool": "x", "deny_glob": "x"}),
	rules(rule{"arg": "a", "deny_glob": "x", "code": "Bad"}), rules(rule{"arg": "a", "deny_glob": "x", "code": strings.Repeat("a", 65)}),
	rules(rule{"arg": "a", "deny_glob": "x", "code": "a b"}), rules(rule{"arg": "a", "deny_glob": "x", "reason": 3}),
	rules(rule{"arg": "a", "deny_glob": "x"}, rule{"arg": "b"}), rules(rule{"arg": "a", "deny_regex": "(", "code": "Bad"}),
	{"rules": []any{rule{"arg": "a", "deny_glob": "x"}, rule{"arg": "b", "deny_regex": "x"}, 7}},
}

// Patterns Go refuses; the module refuses them with Go's message.
var argguardBadRegexps = []string{
	`((`, `(`, `)`, `a)`, `(a`, `(a|b`, `a|b)`, `[`, `[a`, `[]`, `[^]`, `[^`, `[z-a]`, `[a-\x00]`, `a**`, `a*+`, `a??*`, `a+*?`,
	`a{2}*`, `a*{2}`, `a{2}{3}`, `*`, `+a`, `?`, `{2}`, `(*)`, `a|*`, `(?i)*`, `^**`, `a{1001}`, `a{2,1}`, `a{1000,1001}`,
	`a{99999999999}`, `a{1,99999999999}`, `(a{500}){3}`, `(?:a{10}){101}`, `((a{2}){2}){251}`, `\`, `a\`, `\1`, `\8`, `\9`, `\q`,
	`\C`, `\Z`, `\x`, `\xg`, `\x4`, `\xg1`, `\x{}`, `\x{110000}`, `\x{zz}`, `\x{12`, `[\b]`, `[\A]`, `[\Q]`, `\é`, `(?x)`,
	`(?`, `(?i`, `(?-)`, `(?i-)`, `(?--i)`, `(?i-m-s)`, `(?P<>a)`, `(?P<a-b>x)`, `(?P<name`, `(?<>x)`, `(?'n'x)`, `(?P=n)`,
	`(?#comment)`, `(?P>x)`, `(?<é>x)`, `[[:foo:]]`, `[[:alpha:] `, `[[:a]b:]]`, `x{2}{3}`, `x**`, `(?i)(?P<n>a`, `a{2}?{3}`,
	`[a-\d]`, `\Q\E*`, `x(?:`, `(?:`, `())`, `[\x{110000}]`, `[\x]`, `\p{Nope}`, `\p`, `\p{`,
	strings.Repeat("(", 1001) + strings.Repeat(")", 1001),
}

// Patterns Go compiles that the host refuses: over 4096 bytes, or a
// program over 65536 instructions.
var argguardOverBounds = []struct{ pattern, message string }{
	{strings.Repeat("a", 4097), "regex_compile: pattern of 4097 bytes, over the bound of 4096"},
	{strings.Repeat(`(?:x{1000}y{1000})`, 33), "regex_compile: pattern too large: its program would pass 65536 instructions (counted repeats such as {1000} are expanded)"},
}
