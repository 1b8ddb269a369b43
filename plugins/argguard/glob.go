package argguard

import "github.com/toolwarden/toolwarden/internal/pathglob"

// pathGlob is a path pattern (internal/pathglob: the host's scoped
// approvals read globs the same way).
type pathGlob struct{ g *pathglob.Glob }

func compilePathGlob(p string) *pathGlob { return &pathGlob{pathglob.Compile(p)} }

func (g *pathGlob) match(s string) bool { return g.g.Match(s) }

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
