// Package pathglob holds the path globs and path resolution that argguard's
// rules and the host's scoped approvals share, so that "paths under
// /repo/docs/**" means the same files to the plugin that asks and to the
// host that later lifts the ask. It does no I/O.
//
//	g := pathglob.Compile("/repo/docs/**")
//	x := pathglob.Context{Cwd: "/repo"}
//	all := true
//	why := x.Resolve("docs/a.md", func(p string) bool { all = all && g.Match(p); return all })
//	ok := why == "" && all // every path the server may use is under /repo/docs
package pathglob

import (
	"regexp"
	"strings"
)

// Glob is a path pattern compiled to an RE2 regexp, so matching is linear
// in the value whatever the pattern (arguments are attacker-chosen; a
// backtracking matcher can be made exponential).
type Glob struct{ re *regexp.Regexp }

// Compile translates: "**" any run (across '/'), "*" a run without '/',
// "?" one character other than '/', "[...]" a class ("[!...]" negated),
// "\x" a literal x. A trailing "/**" also matches the directory itself.
// It never fails: an odd class makes the pattern match itself literally.
func Compile(p string) *Glob {
	var b strings.Builder
	b.WriteString(`\A`)
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '/' && strings.HasPrefix(p[i:], "/**") && i+3 == len(p):
			b.WriteString(`(?:/.*)?`)
			i += 2
		case c == '*' && i+1 < len(p) && p[i+1] == '*':
			b.WriteString(`.*`)
			i++
		case c == '*':
			b.WriteString(`[^/]*`)
		case c == '?':
			b.WriteString(`[^/]`)
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		case c == '[':
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := p[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	b.WriteString(`\z`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		re = regexp.MustCompile(`\A` + regexp.QuoteMeta(p) + `\z`)
	}
	return &Glob{re: re}
}

// Match reports whether s matches the whole pattern.
func (g *Glob) Match(s string) bool { return g.re.MatchString(s) }

// Escape quotes the glob metacharacters of a literal path, so that
// Compile(Escape(p)) matches p alone.
func Escape(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
