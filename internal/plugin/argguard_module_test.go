package plugin

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// Property tests of the shipped argguard module (Rust, plugins/argguard/
// rust): invariants that need no second implementation. What it answers
// case by case is in plugins/argguard/cases (run by go test ./plugins).

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

func loadArgguard(t testing.TB) *Plugin {
	t.Helper()
	rt := newRuntime(t, Options{PoolSize: 1})
	// A deadline for slow machines and -race: TestArgguardRegexIsLinear
	// holds the module to 250 ms.
	host, err := Load(context.Background(), rt, &config.Policy{Name: "argguard", Builtin: "argguard", TimeoutMs: 20000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return host
}

// argCheck is a check of tool "t" with one argument v in context x.
func argCheck(v string, x *policy.ServerContext) *policy.CheckInput {
	c := checkInput(`{"v":` + jsonRaw(v) + `}`)
	c.Tool, c.App, c.Context = &hints.Tool{Name: "t", HashHex: testTool.HashHex}, "a", x
	return c
}

// regexVerdict is what an ask_regex rule must answer by the ABI's promise
// that argguard matches as Go's regexp does (pdk/ABI.md section 16): ask
// when the pattern matches anywhere in the value, no opinion otherwise.
func regexVerdict(pattern, subject string) policy.Verdict {
	if regexp.MustCompile(pattern).MatchString(subject) {
		return policy.Ask
	}
	return policy.Abstain
}

// Every regexp syntax on every subject (escapes, Unicode, invalid UTF-8,
// long strings) is answered as Go's regexp answers it, and every pattern
// Go refuses refuses the config with Go's message.
func TestArgguardRegexMatchesGo(t *testing.T) {
	host := loadArgguard(t)
	for _, pat := range argguardRegexps {
		a := newBuiltinConfig(t, host, "argguard", rules(rule{"arg": "v", "ask_regex": pat}))
		for _, s := range argguardSubjects {
			v := a.verdict(t, argCheck(s, nil))
			if want := regexVerdict(pat, s); v.Verdict != want || want == policy.Ask && v.Code != "arg_needs_approval" {
				t.Errorf("ask_regex %q on %q: %v %q, want %v", pat, s, v.Verdict, v.Code, want)
			}
		}
		a.close()
	}
	for _, pat := range argguardBadRegexps {
		_, goErr := regexp.Compile(pat)
		a := newBuiltinConfig(t, host, "argguard", rules(rule{"arg": "v", "ask_regex": pat}))
		code, out := a.run(t, EventCheck, a.envelope(argCheck("x", nil)))
		if want := "rules[0].ask_regex: " + goErr.Error(); code != pdk.CodeBadConfig || string(out) != want {
			t.Errorf("%.60q: %d %.80q, want %.80q", pat, code, out, want)
		}
		a.close()
	}
	t.Logf("%d patterns × %d subjects, %d refused", len(argguardRegexps), len(argguardSubjects), len(argguardBadRegexps))
}

// The same for any pattern and subject. Run:
//
//	go test -run XXX -fuzz FuzzArgguardRegexMatchesGo -fuzztime 3m ./internal/plugin/
func FuzzArgguardRegexMatchesGo(f *testing.F) {
	for i, p := range argguardRegexps {
		f.Add(p, argguardSubjects[i%len(argguardSubjects)])
	}
	host := loadArgguard(f)
	f.Fuzz(func(t *testing.T, pattern, subject string) {
		if !utf8.ValidString(pattern) {
			t.Skip("configs are UTF-8 (TOML, then JSON)")
		}
		re, goErr := regexp.Compile(pattern)
		a := newBuiltinConfig(t, host, "argguard", rules(rule{"arg": "v", "ask_regex": pattern}))
		defer a.close()
		code, out := a.run(t, EventCheck, a.envelope(argCheck(subject, nil)))
		switch {
		case goErr != nil:
			if want := "rules[0].ask_regex: " + goErr.Error(); code != pdk.CodeBadConfig || !strings.HasPrefix(want, strings.TrimSuffix(string(out), "...")) {
				t.Fatalf("%q: %d %q, want Go's refusal %q", pattern, code, out, want)
			}
			return
		case code == pdk.CodeBadConfig && strings.HasPrefix(string(out), "rules[0].ask_regex: regex_compile: pattern"):
			return // past the host's bounds (pdk/ABI.md section 16; bad-configs.json)
		case code != pdk.CodeOK:
			t.Fatalf("%q: %d %q", pattern, code, out)
		}
		want := policy.Abstain
		if re.MatchString(subject) {
			want = policy.Ask
		}
		if v, _ := parseCheck(out); v.Verdict != want {
			t.Fatalf("ask_regex %q on %q: %v, want %v (Go's regexp)", pattern, subject, v.Verdict, want)
		}
	})
}

// Patterns that take a backtracking matcher exponential time are answered
// in time linear in the subject, as Go's regexp answers them, under a
// 250 ms deadline: the slowest takes about 10 ms here, and a backtracker
// would need longer than the age of the universe for most of these.
func TestArgguardRegexIsLinear(t *testing.T) {
	rt := newRuntime(t, Options{})
	ctx := context.Background()
	x, a := strings.Repeat("x", 20<<10), strings.Repeat("a", 20<<10)
	for _, c := range []struct {
		pattern, subject string
	}{
		{`(a*)*b`, a}, {`(x+x+)+y`, x}, {`(x+x+)+y`, x + "y"}, {`^(a|a?)+$`, a + "!"}, {`(?:a|aa)*c`, a},
		{`^(\w+\s?)*$`, x + "!"}, {`(.*a){20}`, x}, {`(?i)(?:x{1,3}){1,5}y`, x}, {`\b(?:x|xx)+\B\b`, x},
	} {
		p, err := Load(ctx, rt, &config.Policy{Name: "ag", Builtin: "argguard", TimeoutMs: 250,
			Config: rules(rule{"arg": "v", "ask_regex": c.pattern})}, nil)
		if err != nil {
			t.Fatal(err)
		}
		v := p.Check(ctx, checkInput(`{"v":"`+c.subject+`"}`))
		if want := regexVerdict(c.pattern, c.subject); v.Err != nil || v.Verdict != want {
			t.Errorf("%s on %d bytes: %v %v, want %v", c.pattern, len(c.subject), v.Verdict, v.Err, want)
		}
		p.Close()
	}
}

// spellings are other ways to write the clean absolute path p that a
// server resolves to p: with "." and ".." and doubled or trailing
// slashes, relative to the working directory, under "~" and as a file
// URI (the last three only when the context makes them mean p).
func spellings(p string, x *policy.ServerContext) []string {
	out := []string{p + "/", "/." + p, "/" + p, "/zz/.." + p, strings.Replace(p, "/", "//", -1), strings.Replace(p, "/", "/./", -1)}
	if under, ok := within(p, x.Cwd); ok && !strings.HasPrefix(under, "~") && !strings.HasPrefix(strings.ToLower(under), "file:") {
		out = append(out, under, "./"+under)
	}
	if under, ok := within(p, x.Home); ok {
		out = append(out, strings.TrimSuffix("~/"+under, "/"))
	}
	if u := (&url.URL{Scheme: "file", Path: p}); !strings.ContainsAny(p, "%?#") && plainASCII(p) {
		out = append(out, u.String())
	}
	return out
}

// within is p relative to the clean absolute directory dir ("" for dir
// itself).
func within(p, dir string) (string, bool) {
	if dir == "" || dir != path.Clean(dir) || !path.IsAbs(dir) {
		return "", false
	}
	if p == dir {
		return "", true
	}
	if dir == "/" {
		return p[1:], true
	}
	rest, ok := strings.CutPrefix(p, dir+"/")
	return rest, ok
}

func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// globRules are one glob as a deny, an ask and an allow rule, each in its
// own instance of the module.
type globRules struct {
	glob             string
	deny, ask, allow *builtinConfig
	spelled          *int // counts the denied spellings checked
}

func newGlobRules(t testing.TB, host *Plugin, glob string) *globRules {
	return &globRules{glob: glob,
		deny:  newBuiltinConfig(t, host, "argguard", rules(rule{"arg": "v", "deny_glob": glob})),
		ask:   newBuiltinConfig(t, host, "argguard", rules(rule{"arg": "v", "ask_glob": glob})),
		allow: newBuiltinConfig(t, host, "argguard", rules(rule{"arg": "v", "allow_glob": glob}))}
}

func (g *globRules) close() { g.deny.close(); g.ask.close(); g.allow.close() }

// check checks, for one path and context, the invariants a path glob
// keeps whatever its pattern:
//   - a path a deny_glob denies is denied however it is spelled (spellings);
//   - an ask_glob asks exactly when the deny_glob denies (one matcher);
//   - an allow_glob allows only what the deny_glob denies (an allow needs
//     every form of the path to match, a deny any one);
//   - no rule answers with another decision than its own.
func (g *globRules) check(t testing.TB, s string, x *policy.ServerContext) {
	t.Helper()
	d, k, w := g.deny.verdict(t, argCheck(s, x)), g.ask.verdict(t, argCheck(s, x)), g.allow.verdict(t, argCheck(s, x))
	for _, c := range []struct {
		got, own policy.Verdict
	}{{d.Verdict, policy.Deny}, {k.Verdict, policy.Ask}, {w.Verdict, policy.Allow}} {
		if c.got != c.own && c.got != policy.Abstain {
			t.Fatalf("glob %q on %q in %+v: a %v rule answered %v", g.glob, s, x, c.own, c.got)
		}
	}
	if (d.Verdict == policy.Deny) != (k.Verdict == policy.Ask) {
		t.Fatalf("glob %q on %q in %+v: deny_glob %v but ask_glob %v", g.glob, s, x, d.Verdict, k.Verdict)
	}
	if w.Verdict == policy.Allow && d.Verdict != policy.Deny {
		t.Fatalf("glob %q on %q in %+v: allow_glob allows what deny_glob does not deny", g.glob, s, x)
	}
	p := path.Clean("/" + s)
	if g.deny.verdict(t, argCheck(p, x)).Verdict != policy.Deny {
		return
	}
	for _, sp := range spellings(p, x) {
		if v := g.deny.verdict(t, argCheck(sp, x)); v.Verdict != policy.Deny {
			t.Fatalf("deny_glob %q denies %q but not %q in %+v: %v %q", g.glob, p, sp, x, v.Verdict, v.Reason)
		}
		if g.spelled != nil {
			*g.spelled++
		}
	}
}

// Every glob on every path, alone and in every server context, keeps the
// invariants of globRules.check.
func TestArgguardGlobsHoldForEverySpelling(t *testing.T) {
	host := loadArgguard(t)
	n, spelled := 0, 0
	for _, glob := range argguardGlobs {
		g := newGlobRules(t, host, glob)
		g.spelled = &spelled
		for _, s := range argguardPaths {
			g.check(t, s, &policy.ServerContext{})
			n++
		}
		g.close()
	}
	for _, glob := range argguardContextGlobs {
		g := newGlobRules(t, host, glob)
		g.spelled = &spelled
		for _, x := range argguardContexts {
			if x == nil {
				x = &policy.ServerContext{}
			}
			for _, s := range argguardContextPaths {
				g.check(t, s, x)
				n++
			}
		}
		g.close()
	}
	t.Logf("%d glob, path and context triples; %d spellings of denied paths", n, spelled)
	if spelled < n {
		t.Errorf("only %d spellings of denied paths checked: the cases miss the property", spelled)
	}
}

// The same for any glob, path and context. Run:
//
//	go test -run XXX -fuzz FuzzArgguardDenyGlobHoldsForEverySpelling -fuzztime 3m ./internal/plugin/
func FuzzArgguardDenyGlobHoldsForEverySpelling(f *testing.F) {
	for i, p := range argguardContextPaths {
		x := argguardContexts[i%len(argguardContexts)]
		var cwd, home string
		if x != nil {
			cwd, home = x.Cwd, x.Home
		}
		f.Add(argguardContextGlobs[i%len(argguardContextGlobs)], p, cwd, home)
	}
	for i, g := range argguardGlobs {
		f.Add(g, argguardPaths[i%len(argguardPaths)], "/srv/app", "/home/me")
	}
	host := loadArgguard(f)
	f.Fuzz(func(t *testing.T, glob, subject, cwd, home string) {
		if !utf8.ValidString(glob) {
			t.Skip("configs are UTF-8 (TOML, then JSON)")
		}
		g := newGlobRules(t, host, glob)
		defer g.close()
		g.check(t, subject, &policy.ServerContext{Cwd: cwd, Home: home})
	})
}

// The scopes argguard proposes for remembering an ask are verdicts the
// host reads, never offered when another ask rule matches too (an
// approval would cover that argument's value as well), and never with
// remember = "none", over every context and path.
func TestArgguardScopesParseAndStayNarrow(t *testing.T) {
	host := loadArgguard(t)
	paths := append([]string{"/repo/docs/a.md", "/repo/docs/sub/../b.md", "/top", "/", "/repo/a*b?[c]\\d/x",
		"/repo/\x01ctl/x", "/repo/\xff/x", "docs/rel.md", "~/notes/x", "/repo/" + strings.Repeat("d", 300) + "/x"}, argguardContextPaths...)
	proposed := 0
	for _, remember := range []string{"", "dir", "exact", "none"} {
		for _, second := range []bool{false, true} {
			r1 := rule{"arg": "p", "ask_glob": "/**"}
			if remember != "" {
				r1["remember"] = remember
			}
			rs := []map[string]any{r1}
			if remember == "" {
				// A pointer argument, alone: the scope names it as such.
				rs = []map[string]any{{"arg": "/a~1b", "ask_glob": "/repo/**", "remember": "exact"}}
			}
			if second {
				rs = append(rs, rule{"arg": "q", "ask_regex": "secret"})
			}
			a := newBuiltinConfig(t, host, "argguard", rules(rs...))
			for _, x := range argguardContexts {
				for _, s := range paths {
					for _, q := range []string{`"ok"`, `"a secret"`} {
						c := checkInput(`{"p":` + jsonRaw(s) + `,"a/b":` + jsonRaw(s) + `,"q":` + q + `}`)
						c.Tool, c.Context = &hints.Tool{Name: "t", HashHex: testTool.HashHex}, x
						v := a.verdict(t, c)
						proposed += len(v.Scopes)
						if second && q == `"a secret"` && len(v.Scopes) > 0 {
							t.Errorf("config %s: %+v proposes a scope though another ask rule matches too", a.cfg, v)
						}
						if remember == "none" && len(v.Scopes) > 0 {
							t.Errorf("config %s: remember none proposes %+v", a.cfg, v.Scopes)
						}
						for _, sc := range v.Scopes {
							if v.Verdict != policy.Ask || v.Remember || !strings.HasPrefix(sc.Glob, "/") {
								t.Errorf("config %s: scope %+v on %+v", a.cfg, sc, v)
							}
						}
					}
				}
			}
			a.close()
		}
	}
	if proposed == 0 {
		t.Error("no check proposed a scope: the cases miss it")
	}
}

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
