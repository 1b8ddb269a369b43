package argguard

import (
	"strings"
	"testing"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

func run(t *testing.T, config, tool, args string) string {
	t.Helper()
	p := New()
	env := `{"call":{"app":"fs","tool":{"name":"` + tool + `"},"arguments":` + args + `},"plugin":{"config":` + config + `}}`
	code, out := p.Handle(pdk.EventCheck, []byte(env))
	if code != pdk.CodeOK {
		return "error " + string(out)
	}
	return string(out)
}

func TestRules(t *testing.T) {
	cfg := `{"rules":[
		{"tool":"write_*","arg":"path","deny_glob":"/etc/**"},
		{"tool":"*","arg":"command","ask_regex":"rm\\s+-rf"},
		{"tool":"*","arg":"/opts/0/dir","allow_glob":"/tmp/*","code":"tmp_ok","reason":"temporary files are fine"},
		{"app":"other","arg":"path","deny_glob":"**"},
		{"tool":"cp","arg":"paths","deny_glob":"/root/**"}]}`
	cases := []struct{ tool, args, want string }{
		{"write_file", `{"path":"/etc/passwd"}`, `"decision":"deny","code":"arg_denied","reason":"argument \"path\" = \"/etc/passwd\" matches deny_glob \"/etc/**\""`},
		{"write_file", `{"path":"/etc"}`, `"decision":"deny"`},
		{"write_file", `{"path":"/var/../etc/x"}`, `"decision":"deny"`},
		{"write_file", `{"path":"/etcetera"}`, `"decision":"abstain"`},
		{"read_file", `{"path":"/etc/passwd"}`, `"decision":"abstain"`},
		{"bash", `{"command":"sudo rm -rf /"}`, `"decision":"ask","code":"arg_needs_approval"`},
		{"bash", `{"command":"rm -r x"}`, `"decision":"abstain"`},
		{"x", `{"opts":[{"dir":"/tmp/a"}]}`, `"decision":"allow","code":"tmp_ok","reason":"temporary files are fine"`},
		{"x", `{"opts":[{"dir":"/tmp/a/b"}]}`, `"decision":"abstain"`},
		{"x", `{"opts":[{"dir":"/tmp/../etc"}]}`, `"decision":"abstain"`},
		{"write_x", `{"path":"/etc/a","command":"rm -rf /"}`, `"decision":"deny"`},
		{"cp", `{"paths":["/tmp/a","/root/.ssh/id"]}`, `"decision":"deny"`},
		{"cp", `{"paths":["/tmp/a"]}`, `"decision":"abstain"`},
		{"bash", `{"command":["rm","-rf"]}`, `"decision":"abstain"`},
		{"bash", `{}`, `"decision":"abstain"`},
	}
	for _, c := range cases {
		if got := run(t, cfg, c.tool, c.args); !strings.Contains(got, c.want) {
			t.Errorf("%s %s:\n got %s\nwant %s", c.tool, c.args, got, c.want)
		}
	}
}

func TestPathGlob(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"/etc/**", "/etc", true}, {"/etc/**", "/etc/", true}, {"/etc/**", "/etc/a/b", true}, {"/etc/**", "/etcx", false},
		{"/home/*/.ssh/*", "/home/me/.ssh/id", true}, {"/home/*/.ssh/*", "/home/a/b/.ssh/id", false},
		{"**/*.pem", "/a/b/c.pem", true}, {"*.pem", "/a/c.pem", false}, {"file?.txt", "file1.txt", true},
		{"file?.txt", "file/.txt", false}, {"[abc].go", "b.go", true}, {"[!abc].go", "b.go", false},
		{`\*.go`, "*.go", true}, {`\*.go`, "a.go", false}, {"a.b", "axb", false}, {"[unclosed", "[unclosed", true},
	} {
		if got := compilePathGlob(c.pat).match(c.s); got != c.want {
			t.Errorf("%q ~ %q = %v", c.pat, c.s, got)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for cfg, want := range map[string]string{
		`{"rules":{}}`:                          "rules: want an array of tables",
		`{"rules":[1]}`:                         "rules[0]: want a table",
		`{"rules":[{"arg":"a"}]}`:               "rules[0]: missing a matcher",
		`{"rules":[{"arg":1,"deny_glob":"x"}]}`: "rules[0].arg: want a string",
		`{"rules":[{"arg":"a","deny_glob":"x","code":"Bad"}]}`: "rules[0].code: want [a-z0-9_.:-]{1,64}",
	} {
		if got := run(t, cfg, "t", `{}`); !strings.Contains(got, "error "+want) {
			t.Errorf("%s: %s, want %q", cfg, got, want)
		}
	}
}
