package serverspec_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// What makes two specs one server, and what makes them two.
func TestIdentityTellsServersApartByWhatTheyRun(t *testing.T) {
	t.Parallel()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	bin, other, helpers := filepath.Join(dir, "bin"), filepath.Join(dir, "other"), filepath.Join(dir, "helpers")
	for _, d := range []string{bin, other, helpers} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(bin, "srv"), filepath.Join(other, "srv"), filepath.Join(helpers, "rg")} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	base := serverspec.Spec{Command: "srv", Args: []string{"/data"}, Dir: bin, Env: []string{"PATH=" + bin, "API_TOKEN=a"}}
	with := func(f func(*serverspec.Spec)) serverspec.Spec {
		s := base
		s.Env = append([]string(nil), base.Env...)
		f(&s)
		return s
	}
	cases := []struct {
		name string
		spec serverspec.Spec
		same bool
	}{
		{"another token", with(func(s *serverspec.Spec) { s.Env[1] = "API_TOKEN=b" }), true},
		{"a PATH with an agent's helper folder first", with(func(s *serverspec.Spec) { s.Env[0] = "PATH=" + helpers + ":" + bin }), true},
		{"the same folder through a symbolic link", with(func(s *serverspec.Spec) { s.Dir = link }), true},
		{"the command by its full path", with(func(s *serverspec.Spec) { s.Command = filepath.Join(bin, "srv") }), true},
		{"a PATH that finds another srv", with(func(s *serverspec.Spec) { s.Env[0] = "PATH=" + other + ":" + bin }), false},
		{"other arguments", with(func(s *serverspec.Spec) { s.Args = []string{"/other"} }), false},
		{"another folder", with(func(s *serverspec.Spec) { s.Dir = other }), false},
		{"NODE_OPTIONS set", with(func(s *serverspec.Spec) { s.Env = append(s.Env, "NODE_OPTIONS=--require /tmp/x.js") }), false},
		{"LD_PRELOAD set", with(func(s *serverspec.Spec) { s.Env = append(s.Env, "LD_PRELOAD=/tmp/x.so") }), false},
		{"a URL", serverspec.Spec{URL: "https://mcp.example.com/mcp"}, false},
	}
	want := base.Identity()
	if want.Command != filepath.Join(bin, "srv") {
		t.Fatalf("the bare command is not the file PATH finds: %q", want.Command)
	}
	for _, c := range cases {
		got := c.spec.Identity()
		if got.Equal(want) != c.same || (got.Key() == want.Key()) != c.same {
			t.Errorf("%s: same %v, want %v (%s vs %s)", c.name, got.Equal(want), c.same, got, want)
		}
		if !c.same && want.Differs(got) == "" {
			t.Errorf("%s: Differs says nothing", c.name)
		}
	}
}

// A spec without a folder or environment starts in this process's folder
// with its environment, and that is its identity.
func TestAnInheritedFolderAndEnvironmentAreThisProcesss(t *testing.T) {
	t.Parallel()
	wd, _ := os.Getwd()
	wd, _ = filepath.EvalSymlinks(wd)
	id := serverspec.Spec{Command: "/bin/true"}.Identity()
	if id.Dir != wd || id.Command != "/bin/true" {
		t.Fatalf("%+v, want folder %s", id, wd)
	}
}
