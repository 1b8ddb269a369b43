package plugin

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// The scopes argguard proposes for remembering an ask (plugins/argguard
// scope.go): the module and the Go reference agree byte for byte, and the
// host reads every scope either proposes as a valid verdict.
func TestArgguardScopesMatchGoReferenceAndParse(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 1})
	host, err := Load(context.Background(), rt, &config.Policy{Name: "argguard", Builtin: "argguard", TimeoutMs: 10000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := []*struct {
		what string
		n    int
	}{{what: `"scopes":[{"arg":"/p","glob":"/`}, {what: `/**"}]`}, {what: `"arg":"/a~1b"`}, {what: `\\*`}, {what: `"decision":"ask","code"`}}
	paths := append([]string{"/repo/docs/a.md", "/repo/docs/sub/../b.md", "/top", "/", "/repo/a*b?[c]\\d/x",
		"/repo/\x01ctl/x", "/repo/\xff/x", "docs/rel.md", "~/notes/x", "/repo/" + strings.Repeat("d", 300) + "/x"}, argguardContextPaths...)
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
			a := newArgguardTwins(t, host, rules(rs...))
			for _, x := range argguardContexts {
				for _, s := range paths {
					for _, q := range []string{`"ok"`, `"a secret"`} {
						c := checkInput(`{"p":` + jsonRaw(s) + `,"a/b":` + jsonRaw(s) + `,"q":` + q + `}`)
						c.Tool, c.Context = &hints.Tool{Name: "t", HashHex: testTool.HashHex}, x
						_, out := a.run(t, EventCheck, a.envelope(c))
						if _, err := parseCheck(out); err != nil {
							t.Fatalf("config %s: the host refuses %q: %v", a.cfg, out, err)
						}
						if second && q == `"a secret"` && bytes.Contains(out, []byte(`"scopes"`)) {
							t.Errorf("config %s: %q proposes a scope though another ask rule matches too", a.cfg, out)
						}
						if remember == "none" && bytes.Contains(out, []byte(`"arg":"/p"`)) {
							t.Errorf("config %s: remember none proposes %q", a.cfg, out)
						}
						for _, w := range seen {
							w.n += bytes.Count(out, []byte(w.what))
						}
					}
				}
			}
			a.close()
		}
	}
	for _, w := range seen {
		if w.n == 0 {
			t.Errorf("no output holds %s: the cases miss it", w.what)
		}
	}
	for _, cfg := range []map[string]any{
		rules(rule{"arg": "p", "deny_glob": "/x", "remember": "dir"}),
		rules(rule{"arg": "p", "ask_regex": "x", "remember": "exact"}),
		rules(rule{"arg": "p", "ask_glob": "/x", "remember": "always"}),
		rules(rule{"arg": "p", "ask_glob": "/x", "remember": true}),
	} {
		a := newArgguardTwins(t, host, cfg)
		if code, _ := a.check(t, "t", "a", `{}`); code != pdk.CodeBadConfig {
			t.Errorf("config %s: accepted", a.cfg)
		}
		a.close()
	}
}

// What argguard proposes, spelled out: the directory of the resolved path
// by default, the path alone with "exact", nothing with "none".
func TestArgguardProposesTheDirectoryOfTheAskedPath(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 1})
	host, err := Load(context.Background(), rt, &config.Policy{Name: "argguard", Builtin: "argguard", TimeoutMs: 10000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, remember, path, want string
	}{
		{"the default is the directory", "", "/repo/docs/a.md", `"scopes":[{"arg":"/path","glob":"/repo/docs/**"}]`},
		{"dot-dot is resolved before the directory is taken", "dir", "/repo/docs/x/../a.md", `"scopes":[{"arg":"/path","glob":"/repo/docs/**"}]`},
		{"a relative path is resolved against the server", "dir", "docs/a.md", `"scopes":[{"arg":"/path","glob":"/repo/docs/**"}]`},
		{"exact is the path with its glob characters escaped", "exact", "/repo/docs/a*.md", `"scopes":[{"arg":"/path","glob":"/repo/docs/a\\*.md"}]`},
		{"a file at the root is scoped to itself", "dir", "/a.md", `"scopes":[{"arg":"/path","glob":"/a.md"}]`},
		{"none proposes nothing", "none", "/repo/docs/a.md", `"arguments":["path"]}`},
	}
	for _, tc := range cases {
		r := rule{"tool": "write_file", "arg": "path", "ask_glob": "/**"}
		if tc.remember != "" {
			r["remember"] = tc.remember
		}
		a := newArgguardTwins(t, host, rules(r))
		c := checkInput(`{"path":` + jsonRaw(tc.path) + `}`)
		c.Tool, c.Context = &hints.Tool{Name: "write_file", HashHex: testTool.HashHex}, &policy.ServerContext{Cwd: "/repo", Home: "/home/me"}
		_, out := a.run(t, EventCheck, a.envelope(c))
		if !bytes.HasSuffix(out, []byte(tc.want+"}")) && !bytes.HasSuffix(out, []byte(tc.want)) {
			t.Errorf("%s: %s, want it to end with %s", tc.name, out, tc.want)
		}
		a.close()
	}
}
