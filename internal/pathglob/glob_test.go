package pathglob

import "testing"

func TestEscapedPathMatchesItselfOnly(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"/a/b", "/a*b/c?", "/x/[ab]/y", `/back\slash/**`, "/sp ace/é"} {
		g := Compile(Escape(p))
		if !g.Match(p) {
			t.Errorf("Compile(Escape(%q)) does not match it", p)
		}
		for _, other := range []string{p + "x", "/a/bb", "/axb/c!", "/x/a/y", `/back\slash/z`} {
			if other != p && g.Match(other) {
				t.Errorf("Compile(Escape(%q)) matches %q", p, other)
			}
		}
	}
}

func TestResolveGivesEveryFormOrWhy(t *testing.T) {
	t.Parallel()
	x := Context{Cwd: "/srv", Home: "/home/me", Bases: []string{"/data"}}
	cases := []struct {
		in, why string
		forms   []string
	}{
		{"/a/../b", "", []string{"/b"}},
		{"~/x", "", []string{"/home/me/x"}},
		{"x/y", "", []string{"/srv/x/y", "/data/x/y"}},
		{"~bob/x", WhyUser, nil},
	}
	for _, tc := range cases {
		var got []string
		why := x.Resolve(tc.in, func(p string) bool { got = append(got, p); return true })
		if why != tc.why || len(got) != len(tc.forms) {
			t.Errorf("Resolve(%q) = %q %v, want %q %v", tc.in, why, got, tc.why, tc.forms)
			continue
		}
		for i := range got {
			if got[i] != tc.forms[i] {
				t.Errorf("Resolve(%q) form %d = %q, want %q", tc.in, i, got[i], tc.forms[i])
			}
		}
	}
	if why := (&Context{}).Resolve("rel", func(string) bool { return true }); why != WhyCwd {
		t.Errorf("unknown cwd: %q", why)
	}
}
