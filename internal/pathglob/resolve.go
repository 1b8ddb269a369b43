package pathglob

import (
	"path"
	"strings"
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

// Context is what is known of a server's directories: absolute paths, ""
// where unknown.
type Context struct {
	Cwd, Home string
	// Bases are the other directories the server may resolve a relative
	// path against: the client's roots, then the directories on its
	// command line.
	Bases []string
}

// Why a value could not be resolved; a reason text carries it.
const (
	WhyCwd  = "the server's working directory is unknown"
	WhyHome = "the server's home directory is unknown"
	WhyUser = "another user's home directory is not resolved"
	WhyURI  = "a file URI on another host, or with a bad %-escape"
)

// Resolve calls form for each path the server may use for s (absolute and
// cleaned), stopping when form returns false. It returns why s cannot be
// resolved ("" when it can), before calling form at all.
func (x *Context) Resolve(s string, form func(string) bool) (why string) {
	if strings.HasPrefix(s, "/") {
		form(path.Clean(s))
		return ""
	}
	if s == "~" || strings.HasPrefix(s, "~/") {
		if x.Home == "" {
			return WhyHome
		}
		form(path.Clean(x.Home + s[1:]))
		return ""
	}
	if strings.HasPrefix(s, "~") {
		return WhyUser
	}
	if x.Cwd == "" {
		return WhyCwd
	}
	uri, ok := fileURIPath(s)
	if !ok {
		return WhyURI
	}
	if !form(path.Clean(x.Cwd + "/" + s)) {
		return ""
	}
	for _, b := range x.Bases {
		if !form(path.Clean(b + "/" + s)) {
			return ""
		}
	}
	if uri != "" {
		if !form(path.Clean(uri)) {
			return ""
		}
		if i := strings.IndexAny(uri, "?#"); i >= 0 {
			form(path.Clean(uri[:i]))
		}
	}
	return ""
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
