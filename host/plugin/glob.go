package plugin

// glob is an apps/tools pattern of a policy: '*' matches any run of
// characters (including none), '?' exactly one byte, everything else itself.
// App ids and tool names have no path structure, so there is no '**'.
type glob struct {
	pat     string
	literal bool
}

func compileGlob(p string) glob {
	lit := true
	for i := 0; i < len(p); i++ {
		if p[i] == '*' || p[i] == '?' {
			lit = false
		}
	}
	return glob{pat: p, literal: lit}
}

func (g glob) match(s string) bool {
	if g.literal {
		return g.pat == s
	}
	return globMatch(g.pat, s)
}

func matchAny(gs []glob, s string) bool {
	if len(gs) == 0 {
		return true
	}
	for _, g := range gs {
		if g.match(s) {
			return true
		}
	}
	return false
}

// globMatch is the classic linear-time wildcard match with one backtrack
// point (the last '*').
func globMatch(p, s string) bool {
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
