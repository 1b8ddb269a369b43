package argguard

import (
	"path"
	"strings"

	"github.com/toolwarden/toolwarden/internal/pathglob"
	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// Path resolution: a server resolves a relative path, "~" and ".." itself,
// so a glob on the argument's text would judge a different file than the
// one the server touches ("secret/x" is "/root/secret/x" to a server in
// /root). Globs therefore also judge the paths the server may use, from
// what the host knows of it (the envelope's server_context):
//
//   - "/a/../b": cleaned, "/b".
//   - "~" and "~/x": the server's home, joined and cleaned (as Node's
//     os.homedir and Python's expanduser do). "~user/x" is never resolved.
//   - any other string ("x", "./x", "../x", "", "file:..."): joined to the
//     server's working directory and, as well, to each of its other base
//     directories (the client's roots and the directories on its command
//     line: server-filesystem resolves against those), each cleaned.
//   - "file://[localhost]/p": also the URI's path, percent-decoded, whole
//     and cut at the first '?' or '#' (as a URL parser reads it).
//
// When a form needs a directory the host does not know (the working
// directory, the home, a file URI's other host, a bad %-escape), the value
// is unresolvable: deny and ask globs match it (fail closed), allow globs do
// not. Deny and ask match when any form does; allow needs every form.

// serverContext is the envelope's server_context: absolute paths, ""
// where unknown.
type serverContext struct {
	cwd, home string
	// bases are the other directories the server may resolve a relative
	// path against: the client's roots, then arg_dirs.
	bases []string
}

// Why a value could not be resolved; the reason text carries it.
const (
	whyCwd   = pathglob.WhyCwd
	whyHome  = pathglob.WhyHome
	whyUser  = pathglob.WhyUser
	whyURI   = pathglob.WhyURI
	noReason = ""
)

// lazyContext reads a check's server_context when a path first needs it.
type lazyContext struct {
	c    *pdk.Check
	x    serverContext
	read bool
}

func (l *lazyContext) get() *serverContext {
	if !l.read {
		l.x, l.read = readContext(l.c.Raw().Get("server_context")), true
	}
	return &l.x
}

// readContext reads server_context; a path that is not absolute counts as
// unknown.
func readContext(v pdk.Value) serverContext {
	var x serverContext
	abs := func(v pdk.Value) string {
		if s, ok := v.Str(); ok && strings.HasPrefix(s, "/") {
			return s
		}
		return ""
	}
	x.cwd = abs(v.Get("cwd"))
	if x.home = abs(v.Get("home")); x.home != "" {
		x.home = path.Clean(x.home) // a glob on "~/..." compares paths to it
	}
	for _, key := range [...]string{"roots", "arg_dirs"} {
		v.Get(key).Each(func(_ int, e pdk.Value) bool {
			if s := abs(e); s != "" {
				x.bases = append(x.bases, s)
			}
			return true
		})
	}
	return x
}

// resolve calls form for each path the server may use for s (absolute and
// cleaned), stopping when form returns false. It returns why s cannot be
// resolved ("" when it can), before calling form at all.
func (x *serverContext) resolve(s string, form func(string) bool) (why string) {
	c := pathglob.Context{Cwd: x.cwd, Home: x.home, Bases: x.bases}
	return c.Resolve(s, form)
}
