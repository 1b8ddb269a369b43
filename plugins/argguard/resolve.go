package argguard

import (
	"path"
	"strings"

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
	whyCwd   = "the server's working directory is unknown"
	whyHome  = "the server's home directory is unknown"
	whyUser  = "another user's home directory is not resolved"
	whyURI   = "a file URI on another host, or with a bad %-escape"
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
	if strings.HasPrefix(s, "/") {
		form(path.Clean(s))
		return noReason
	}
	if s == "~" || strings.HasPrefix(s, "~/") {
		if x.home == "" {
			return whyHome
		}
		form(path.Clean(x.home + s[1:]))
		return noReason
	}
	if strings.HasPrefix(s, "~") {
		return whyUser
	}
	if x.cwd == "" {
		return whyCwd
	}
	uri, ok := fileURIPath(s)
	if !ok {
		return whyURI
	}
	if !form(path.Clean(x.cwd + "/" + s)) {
		return noReason
	}
	for _, b := range x.bases {
		if !form(path.Clean(b + "/" + s)) {
			return noReason
		}
	}
	if uri != "" {
		if !form(path.Clean(uri)) {
			return noReason
		}
		if i := strings.IndexAny(uri, "?#"); i >= 0 {
			form(path.Clean(uri[:i]))
		}
	}
	return noReason
}

// fileURIPath returns the percent-decoded path of a file URI
// ("file:///p", "file://localhost/p"; the scheme in any case), "" for any
// other string, and false for a file URI whose path cannot be known.
func fileURIPath(s string) (string, bool) {
	if len(s) < 7 || !strings.EqualFold(s[:7], "file://") {
		return "", true
	}
	rest := s[7:]
	if len(rest) >= 9 && strings.EqualFold(rest[:9], "localhost") {
		rest = rest[9:]
	}
	if !strings.HasPrefix(rest, "/") {
		return "", false
	}
	var b []byte
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if c == '%' {
			if i+2 >= len(rest) || unhex(rest[i+1]) < 0 || unhex(rest[i+2]) < 0 {
				return "", false
			}
			c = byte(unhex(rest[i+1])<<4 | unhex(rest[i+2]))
			i += 2
		}
		b = append(b, c)
	}
	return string(b), true
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
