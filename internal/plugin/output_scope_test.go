package plugin

import (
	"strings"
	"testing"
)

func TestCheckVerdictScopesAreReadStrictly(t *testing.T) {
	t.Parallel()
	ask := `{"decision":"ask","arguments":["path","/cmd"],`
	cases := []struct {
		name, out, err string
	}{
		{"a glob scope on a named argument", ask + `"scopes":[{"arg":"/path","glob":"/repo/docs/**"}]}`, ""},
		{"a regex scope on a pointer argument", ask + `"scopes":[{"arg":"/cmd","regex":"^git push origin feature/"}]}`, ""},
		{"null scopes are absent", ask + `"scopes":null}`, ""},
		{"scopes that are not an array", ask + `"scopes":{"arg":"/path","glob":"/a"}}`, "array"},
		{"an empty array", ask + `"scopes":[]}`, "empty"},
		{"more than four", ask + `"scopes":[` + strings.Repeat(`{"arg":"/path","glob":"/a"},`, 4) + `{"arg":"/cmd","glob":"/a"}]}`, "more than 4"},
		{"an unknown key", ask + `"scopes":[{"arg":"/path","glob":"/a","flags":"i"}]}`, "unknown key"},
		{"a key twice", ask + `"scopes":[{"arg":"/path","glob":"/a","glob":"/b"}]}`, "twice"},
		{"a number for a pattern", ask + `"scopes":[{"arg":"/path","glob":1}]}`, "scopes[0].glob"},
		{"a relative glob", ask + `"scopes":[{"arg":"/path","glob":"docs/**"}]}`, "absolute"},
		{"both glob and regex", ask + `"scopes":[{"arg":"/path","glob":"/a","regex":"a"}]}`, "exactly one"},
		{"a regex that does not compile", ask + `"scopes":[{"arg":"/cmd","regex":"(a"}]}`, "regex"},
		{"an argument the verdict does not name", ask + `"scopes":[{"arg":"/content","glob":"/a"}]}`, "not one of"},
		{"two scopes for one argument", ask + `"scopes":[{"arg":"/path","glob":"/a"},{"arg":"/path","glob":"/b"}]}`, "second scope"},
		{"scopes on a deny", `{"decision":"deny","arguments":["path"],"scopes":[{"arg":"/path","glob":"/a"}]}`, "only with decision"},
		{"scopes on a remembered ask", `{"decision":"ask","remember":true,"arguments":["path"],"scopes":[{"arg":"/path","glob":"/a"}]}`, "remember false"},
		{"scopes before the arguments they cover", `{"decision":"ask","scopes":[{"arg":"/path","glob":"/a"}],"arguments":["path"]}`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := parseCheck([]byte(tc.out))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one about %q (verdict %+v)", err, tc.err, v)
			}
		})
	}
}
