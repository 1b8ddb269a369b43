package serverspec

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/toolwarden/toolwarden/internal/policy"
)

// What toolwarden knows of a server's paths is what the server starts
// with: its configured cwd (relative to toolwarden's), else toolwarden's;
// HOME from its env, else toolwarden's; the folders on its command line.
func TestServerContext(t *testing.T) {
	wd := t.TempDir()
	home := t.TempDir()
	for _, d := range []string{"served", "sub/dir"} {
		if err := os.MkdirAll(filepath.Join(wd, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(home, "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(wd, "file.txt")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	for _, c := range []struct {
		name string
		spec Spec
		wd   string
		want policy.ServerContext
	}{
		{"a server without cwd inherits toolwarden's", Spec{Command: "srv"}, wd,
			policy.ServerContext{Cwd: wd, Home: home}},
		{"an absolute cwd is the server's", Spec{Command: "srv", Dir: "/opt/x/../y"}, wd,
			policy.ServerContext{Cwd: "/opt/y", Home: home}},
		{"a relative cwd is taken from toolwarden's", Spec{Command: "srv", Dir: "sub"}, wd,
			policy.ServerContext{Cwd: filepath.Join(wd, "sub"), Home: home}},
		{"an unknown working directory leaves a relative cwd unknown", Spec{Command: "srv", Dir: "sub"}, "",
			policy.ServerContext{Home: home}},
		{"HOME comes from the server's env when it has one", Spec{Command: "srv", Env: []string{"HOME=/a", "PATH=/bin", "HOME=/b/"}}, wd,
			policy.ServerContext{Cwd: wd, Home: "/b"}},
		{"a relative HOME is unknown", Spec{Command: "srv", Env: []string{"HOME=rel"}}, wd,
			policy.ServerContext{Cwd: wd}},
		{"folders on the command line, ~ and relative ones too; files, flags and missing folders are not",
			Spec{Command: "srv", Args: []string{"-y", "pkg", "served", "./served", "--root=sub/dir", "~/proj", "~", file, "/no/such/dir", "-", ""}}, wd,
			policy.ServerContext{Cwd: wd, Home: home, ArgDirs: []string{filepath.Join(wd, "served"), filepath.Join(wd, "sub/dir"), filepath.Join(home, "proj"), home}}},
		{"an HTTP server's paths are unknown", Spec{URL: "http://x/mcp", Args: []string{"/"}}, wd,
			policy.ServerContext{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.spec.ServerContext(c.wd); !reflect.DeepEqual(*got, c.want) {
				t.Errorf("got  %+v\nwant %+v", *got, c.want)
			}
		})
	}
}

// A folder reached through a symlink is listed with its real path too.
func TestWithRealPaths(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	dir, _ = filepath.EvalSymlinks(dir)
	real, link = filepath.Join(dir, "real"), filepath.Join(dir, "link")
	for _, c := range []struct{ in, want []string }{
		{[]string{real}, []string{real}},
		{[]string{link}, []string{link, real}},
		{[]string{"/no/such", link, real}, []string{"/no/such", link, real}},
		{[]string{real, link}, []string{real, link}},
		{nil, nil},
	} {
		if got := WithRealPaths(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("WithRealPaths(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := (Spec{Command: "srv", Args: []string{link}}).ServerContext(dir).ArgDirs; !reflect.DeepEqual(got, []string{link, real}) {
		t.Errorf("ArgDirs %q, want the link and its real path", got)
	}
}
