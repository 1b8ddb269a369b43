package serverspec

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/internal/policy"
)

// ServerContext is what the calls to the server this Spec starts are
// resolved against (policy.ServerContext, the one type for it), so that
// path rules (argguard) resolve relative and "~" arguments the way the
// server will. Every front end derives it here: the proxy for each
// upstream, a hook for the server an event names, the example agent for
// the servers it starts.
//
//   - Cwd: Dir, joined to wd when relative; wd itself when Dir is empty
//     (the process inherits toolwarden's directory, which wd should be).
//   - Home: HOME in Env, or toolwarden's own HOME when Env is nil (the
//     server inherits it); without HOME, the passwd entry's, as Node's
//     os.homedir and Python's expanduser fall back to.
//   - ArgDirs: the arguments (and the values of --flag=value arguments)
//     that name an existing directory, "~" expanded and relative ones
//     joined to Cwd: server-filesystem resolves relative paths against the
//     directories it serves, which it takes from its command line. Each is
//     followed by its real path when a symlink leads there (server-
//     filesystem resolves against the real one; see WithRealPaths).
//
// An HTTP server's paths are unknown (it runs elsewhere): the context is
// empty, so path rules fail closed on relative paths. The client's roots
// are added by the proxy as the server asks for them.
func (s Spec) ServerContext(wd string) *policy.ServerContext {
	x := &policy.ServerContext{}
	if s.URL != "" || s.Command == "" {
		return x
	}
	if filepath.IsAbs(wd) {
		x.Cwd = filepath.Clean(wd)
	}
	if s.Dir != "" {
		switch {
		case filepath.IsAbs(s.Dir):
			x.Cwd = filepath.Clean(s.Dir)
		case x.Cwd != "":
			x.Cwd = filepath.Join(x.Cwd, s.Dir)
		}
	}
	x.Home = s.home()
	seen := map[string]bool{}
	for _, a := range s.Args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		switch {
		case a == "" || strings.HasPrefix(a, "-"):
			continue
		case a == "~" || strings.HasPrefix(a, "~/"):
			if x.Home == "" {
				continue
			}
			a = x.Home + a[1:]
		case !filepath.IsAbs(a):
			if x.Cwd == "" {
				continue
			}
			a = filepath.Join(x.Cwd, a)
		}
		a = filepath.Clean(a)
		if seen[a] {
			continue
		}
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			seen[a] = true
			x.ArgDirs = append(x.ArgDirs, a)
		}
	}
	x.ArgDirs = WithRealPaths(x.ArgDirs)
	return x
}

// WithRealPaths returns paths with each one's real path (symlinks
// resolved) after it, where that differs and is not listed yet: a rule
// may name a folder either way, and a server may resolve against either.
func WithRealPaths(paths []string) []string {
	var out []string
	for i, p := range paths {
		r, err := filepath.EvalSymlinks(p)
		if err != nil || r == p || slices.Contains(paths, r) || slices.Contains(out, r) {
			if out != nil {
				out = append(out, p)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(paths)+1), paths[:i]...)
		}
		out = append(out, p, r)
	}
	if out == nil {
		return paths
	}
	return out
}

// home is the HOME the server starts with, "" when unknown or not
// absolute.
func (s Spec) home() string {
	h, set := "", false
	if s.Env == nil {
		h, set = os.LookupEnv("HOME")
	} else {
		for _, kv := range s.Env {
			if v, ok := strings.CutPrefix(kv, "HOME="); ok {
				h, set = v, true // the last one wins, as in exec.Cmd
			}
		}
	}
	if !set || h == "" {
		if u, err := user.Current(); err == nil {
			h = u.HomeDir
		}
	}
	if !filepath.IsAbs(h) {
		return ""
	}
	return filepath.Clean(h)
}
