package argguard

import (
	"strings"
	"testing"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// runIn checks a write_file call whose path is the JSON value path, with
// the envelope's server_context set to ctx (raw JSON; "" leaves it out).
func runIn(t *testing.T, ctx, cfg, path string) string {
	t.Helper()
	env := `{"abi":1,"event":"check","session":{"id":"s","labels":[]}`
	if ctx != "" {
		env += `,"server_context":` + ctx
	}
	env += `,"call":{"app":"fs","tool":{"name":"write_file"},"arguments":{"path":` + path + `}},"plugin":{"config":` + cfg + `}}`
	code, out := New().Handle(pdk.EventCheck, []byte(env))
	if code != pdk.CodeOK {
		t.Fatalf("%s: code %d: %s", env, code, out)
	}
	return string(out)
}

func glob(kind, pattern string) string {
	return `{"rules":[{"tool":"write_file","arg":"path","` + kind + `":"` + pattern + `"}]}`
}

// Path globs judge the path the server will use: relative paths, "." and
// "..", "~" and file URIs resolved against the server's context; what
// cannot be resolved matches deny and ask rules and no allow rule.
func TestPathResolution(t *testing.T) {
	const (
		known    = `{"cwd":"/srv/app","home":"/home/me"}`
		roots    = `{"cwd":"/srv/app","home":"/home/me","roots":["/data"],"arg_dirs":["/opt/served"]}`
		noCwd    = `{"home":"/home/me"}`
		noHome   = `{"cwd":"/srv/app"}`
		relative = `{"cwd":"srv/app","home":"~"}` // not absolute: unknown
		secret   = "/srv/app/secret/**"
	)
	for _, c := range []struct {
		name, ctx, cfg, path string
		want                 []string // substrings of the output, in order
	}{
		{"a relative path is resolved against the working directory", known, glob("deny_glob", secret), `"secret/rel.txt"`,
			[]string{`"decision":"deny"`, `= \"secret/rel.txt\" (resolved: \"/srv/app/secret/rel.txt\") matches deny_glob`, `"arguments":["path"]`}},
		{"a ./ path is resolved", known, glob("deny_glob", secret), `"./secret/rel2.txt"`,
			[]string{`"decision":"deny"`, `(resolved: \"/srv/app/secret/rel2.txt\")`}},
		{"a .. that climbs back in is resolved", known, glob("deny_glob", secret), `"../app/secret/x"`,
			[]string{`"decision":"deny"`, `(resolved: \"/srv/app/secret/x\")`}},
		{"a .. that escapes the directory is resolved outside it", known, glob("deny_glob", secret), `"../../secret/x"`,
			[]string{`"decision":"abstain"`}},
		{"a sibling of the guarded directory is not guarded", known, glob("deny_glob", secret), `"secrets/x"`,
			[]string{`"decision":"abstain"`}},
		{"~/ is the home", known, glob("ask_glob", "/home/me/.ssh/**"), `"~/.ssh/id_ed25519"`,
			[]string{`"decision":"ask"`, `(resolved: \"/home/me/.ssh/id_ed25519\")`}},
		{"~ alone is the home", known, glob("deny_glob", "/home/me"), `"~"`,
			[]string{`"decision":"deny"`, `(resolved: \"/home/me\")`}},
		{"~/.. climbs out of the home", known, glob("deny_glob", secret), `"~/../../srv/app/secret/t.txt"`,
			[]string{`"decision":"deny"`, `(resolved: \"/srv/app/secret/t.txt\")`}},
		{"~user is never resolved: deny fails closed", known, glob("deny_glob", secret), `"~root/x"`,
			[]string{`"decision":"deny"`, `= \"~root/x\" (unresolved: another user's home directory is not resolved) matches deny_glob`}},
		{"~user is never resolved: allow does not match", known, glob("allow_glob", "/home/**"), `"~me/x"`,
			[]string{`"decision":"abstain"`}},
		{"an absolute path with .. is cleaned", known, glob("deny_glob", secret), `"/srv/app/pub/../secret/x"`,
			[]string{`"decision":"deny"`, `(resolved: \"/srv/app/secret/x\")`}},
		{"an absolute path needs no context", "", glob("deny_glob", secret), `"/srv/app/secret/x"`,
			[]string{`"decision":"deny"`, `= \"/srv/app/secret/x\" matches`}},
		{"an absolute path outside the glob does not match without context", "", glob("deny_glob", secret), `"/tmp/x"`,
			[]string{`"decision":"abstain"`}},
		{"the empty path is the working directory", known, glob("deny_glob", "/srv/**"), `""`,
			[]string{`"decision":"deny"`, `(resolved: \"/srv/app\")`}},
		{"unknown cwd: deny matches a relative path", noCwd, glob("deny_glob", secret), `"notes.txt"`,
			[]string{`"decision":"deny"`, `(unresolved: the server's working directory is unknown)`}},
		{"unknown cwd: ask matches a relative path", noCwd, glob("ask_glob", secret), `"./notes.txt"`,
			[]string{`"decision":"ask"`, `(unresolved: the server's working directory is unknown)`}},
		{"unknown cwd: allow does not match", noCwd, glob("allow_glob", "**"), `"notes.txt"`,
			[]string{`"decision":"abstain"`}},
		{"no server_context at all: deny fails closed", "", glob("deny_glob", secret), `"secret/x"`,
			[]string{`"decision":"deny"`, `(unresolved: the server's working directory is unknown)`}},
		{"a cwd that is not absolute counts as unknown", relative, glob("deny_glob", "/nowhere/**"), `"x"`,
			[]string{`"decision":"deny"`, `(unresolved: the server's working directory is unknown)`}},
		{"unknown home: deny matches ~/", noHome, glob("deny_glob", "/nowhere/**"), `"~/x"`,
			[]string{`"decision":"deny"`, `(unresolved: the server's home directory is unknown)`}},
		{"unknown home: allow does not match ~/", noHome, glob("allow_glob", "**"), `"~/x"`,
			[]string{`"decision":"abstain"`}},
		{"allow matches a relative path that resolves inside it", known, glob("allow_glob", "/srv/app/pub/**"), `"pub/a.txt"`,
			[]string{`"decision":"allow"`, `(resolved: \"/srv/app/pub/a.txt\")`}},
		{"allow does not match a relative path that resolves outside it", known, glob("allow_glob", "/srv/app/pub/**"), `"pub/../../x"`,
			[]string{`"decision":"abstain"`}},
		{"a relative allow glob no longer matches a relative value's text", known, glob("allow_glob", "*.txt"), `"a.txt"`,
			[]string{`"decision":"abstain"`}},
		{"a relative deny glob still matches a relative value's text", known, glob("deny_glob", "*.pem"), `"key.pem"`,
			[]string{`"decision":"deny"`, `= \"key.pem\" matches`}},
		{"a deny glob matches through a root", roots, glob("deny_glob", "/data/secret/**"), `"secret/x"`,
			[]string{`"decision":"deny"`, `(resolved: \"/data/secret/x\")`}},
		{"a deny glob matches through a command-line directory", roots, glob("deny_glob", "/opt/served/secret/**"), `"secret/x"`,
			[]string{`"decision":"deny"`, `(resolved: \"/opt/served/secret/x\")`}},
		{"an allow glob needs every base to match", roots, glob("allow_glob", "/srv/app/**"), `"pub/a"`,
			[]string{`"decision":"abstain"`}},
		{"an allow glob over every base matches", roots, glob("allow_glob", "/**"), `"pub/a"`,
			[]string{`"decision":"allow"`, `(resolved: \"/srv/app/pub/a\")`}},
		{"a file URI is read as its path", known, glob("deny_glob", secret), `"file:///srv/app/secret/x"`,
			[]string{`"decision":"deny"`, `(resolved: \"/srv/app/secret/x\")`}},
		{"a file URI is percent-decoded", known, glob("deny_glob", secret), `"FILE://localhost/srv/app/%73ecret/x"`,
			[]string{`"decision":"deny"`, `(resolved: \"/srv/app/secret/x\")`}},
		{"a file URI's query is cut as a URL parser cuts it", known, glob("deny_glob", "/srv/app/secret"), `"file:///srv/app/secret?x=1"`,
			[]string{`"decision":"deny"`, `(resolved: \"/srv/app/secret\")`}},
		{"a file URI on another host fails closed", known, glob("deny_glob", secret), `"file://evil/srv/app/x"`,
			[]string{`"decision":"deny"`, `(unresolved: a file URI on another host, or with a bad %-escape)`}},
		{"a file URI with a bad escape fails closed", known, glob("deny_glob", secret), `"file:///srv/%zz"`,
			[]string{`"decision":"deny"`, `(unresolved: a file URI`}},
		{"numbers are not paths", noCwd, glob("deny_glob", secret), `42`,
			[]string{`"decision":"abstain"`}},
		{"an array is denied when one element resolves inside", known, glob("deny_glob", secret), `["pub/a","secret/b"]`,
			[]string{`"decision":"deny"`, `= \"secret/b\" (resolved: \"/srv/app/secret/b\")`}},
		{"an array is allowed only when every element resolves inside", known, glob("allow_glob", "/srv/app/pub/**"), `["pub/a","../b"]`,
			[]string{`"decision":"abstain"`}},
		{"a ~/ glob matches an absolute path under the home", known, glob("deny_glob", "~/.ssh/**"), `"/home/me/.ssh/id_ed25519"`,
			[]string{`"decision":"deny"`, `= \"/home/me/.ssh/id_ed25519\" matches deny_glob \"~/.ssh/**\"`}},
		{"a ~/ glob matches the same path spelled with ~", known, glob("deny_glob", "~/.ssh/**"), `"~/.ssh/id"`,
			[]string{`"decision":"deny"`}},
		{"a ~/ glob matches a relative path that resolves under the home", `{"cwd":"/home/me/src","home":"/home/me"}`, glob("ask_glob", "~/.ssh/**"), `"../.ssh/id"`,
			[]string{`"decision":"ask"`, `(resolved: \"/home/me/.ssh/id\")`}},
		{"a ~/ glob matches a path that climbs into the home", known, glob("deny_glob", "~/.ssh/**"), `"/home/other/../me/.ssh/id"`,
			[]string{`"decision":"deny"`, `(resolved: \"/home/me/.ssh/id\")`}},
		{"a ~ glob matches the home itself", known, glob("deny_glob", "~"), `"/home/me"`,
			[]string{`"decision":"deny"`}},
		{"a ~/ glob does not match a path outside the home", known, glob("deny_glob", "~/**"), `"/home/mel/x"`,
			[]string{`"decision":"abstain"`}},
		{"a ~/ glob with the home unknown: deny fails closed on absolute paths", noHome, glob("deny_glob", "~/.ssh/**"), `"/etc/passwd"`,
			[]string{`"decision":"deny"`, `(unresolved: the server's home directory is unknown)`}},
		{"a ~/ glob with the home unknown: allow does not match", noHome, glob("allow_glob", "~/**"), `"/home/me/x"`,
			[]string{`"decision":"abstain"`}},
		{"a ~/ allow glob matches under the home", known, glob("allow_glob", "~/proj/**"), `"/home/me/proj/a"`,
			[]string{`"decision":"allow"`}},
		{"a home of / puts everything under ~", `{"cwd":"/","home":"/"}`, glob("deny_glob", "~/etc/**"), `"/etc/passwd"`,
			[]string{`"decision":"deny"`}},
		{"a home with a trailing slash is cleaned", `{"cwd":"/","home":"/home/me/"}`, glob("deny_glob", "~/.ssh/**"), `"/home/me/.ssh/id"`,
			[]string{`"decision":"deny"`}},
		{"regexps judge the text, not a resolved path", noCwd, `{"rules":[{"arg":"path","deny_regex":"^/srv"}]}`, `"x"`,
			[]string{`"decision":"abstain"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := runIn(t, c.ctx, c.cfg, c.path)
			rest := got
			for _, w := range c.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("got  %s\nwant %q (in this order: %q)", got, w, c.want)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// A rule's arg is named in the verdict's "arguments" only when the host
// can read it as an argument name.
func TestFlaggable(t *testing.T) {
	for arg, want := range map[string]bool{
		"path": true, "/options/path": true, "/a~0b/c~1d": true, "a~b": true,
		"/a~b": false, "/a~": false, strings.Repeat("x", 256): true, strings.Repeat("x", 257): false,
	} {
		if got := flaggable(arg); got != want {
			t.Errorf("flaggable(%q) = %v", arg, got)
		}
	}
}
