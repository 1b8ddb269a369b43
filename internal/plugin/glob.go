package plugin

import "path"

// glob is an apps/tools pattern of a policy, in the syntax the config
// validates: Go's path.Match ('*', '?', '[a-z]', '\' escapes).
type glob struct {
	pat     string
	literal bool
}

func compileGlob(p string) glob {
	lit := true
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?', '[', '\\':
			lit = false
		}
	}
	return glob{pat: p, literal: lit}
}

func (g glob) match(s string) bool {
	if g.literal {
		return g.pat == s
	}
	ok, err := path.Match(g.pat, s)
	return ok && err == nil
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
