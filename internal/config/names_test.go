package config

import (
	"regexp"
	"testing"
)

// The name checks are written out by hand so that loading this package
// compiles no regexp; each must accept exactly what its pattern does.
var namePatterns = []struct {
	name    string
	pattern *regexp.Regexp
	check   func(string) bool
}{
	{"environment variable", regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`), isEnvName},
	{"builtin plugin", regexp.MustCompile(`^[a-z][a-z0-9_-]*$`), isBuiltinName},
	{"Codex server", regexp.MustCompile(`^[a-zA-Z0-9_-]+$`), isCodexServerName},
}

func FuzzNameChecksMatchTheirPatterns(f *testing.F) {
	for _, s := range []string{"", "a", "A", "_", "-", "9", "a9", "9a", "_x", "-x", "x-y_z", "X-Y", "a b", "é", "a\n", "a.b", "SECRET_ENV", "trifecta"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range namePatterns {
			if got, want := p.check(s), p.pattern.MatchString(s); got != want {
				t.Fatalf("%s name %q: check says %v, pattern %v", p.name, s, got, want)
			}
		}
	})
}
