package argguard

import (
	"regexp"
	"strings"
)

// pathGlob is a path pattern compiled to an RE2 regexp, so matching is
// linear in the value whatever the pattern (arguments are attacker-chosen;
// a backtracking matcher can be made exponential).
type pathGlob struct{ re *regexp.Regexp }

// compilePathGlob translates: "**" any run (across '/'), "*" a run without
// '/', "?" one character other than '/', "[...]" a class ("[!...]"
// negated), "\x" a literal x. A trailing "/**" also matches the directory
// itself.
func compilePathGlob(p string) *pathGlob {
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
		// An odd class; fall back to matching the pattern literally.
		re = regexp.MustCompile(`\A` + regexp.QuoteMeta(p) + `\z`)
	}
	return &pathGlob{re: re}
}

func (g *pathGlob) match(s string) bool { return g.re.MatchString(s) }

// nameMatch matches tool and app names: '*' any run, '?' one byte.
func nameMatch(p, s string) bool {
	if p == "*" {
		return true
	}
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
