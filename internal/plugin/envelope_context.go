package plugin

import "github.com/toolwarden/toolwarden/internal/policy"

// appendServerContext writes `,"server_context":{...}` for check and
// observe (pdk/ABI.md 4.2): what is known of the server's working
// directory, home, roots and command-line directories, each key present
// only when known. Nothing is written when nothing is known. It goes before
// the call, whose arguments may be long, so that a plugin resolving a path
// finds it without scanning them.
func appendServerContext(b []byte, x *policy.ServerContext) []byte {
	if x == nil {
		return b
	}
	b = append(b, `,"server_context":{`...)
	n := 0
	sep := func() {
		if n > 0 {
			b = append(b, ',')
		}
		n++
	}
	if x.Cwd != "" {
		sep()
		b = append(b, `"cwd":`...)
		b = appendString(b, x.Cwd)
	}
	if x.Home != "" {
		sep()
		b = append(b, `"home":`...)
		b = appendString(b, x.Home)
	}
	for _, l := range [...]struct {
		key   string
		paths []string
	}{{"roots", x.Roots}, {"arg_dirs", x.ArgDirs}} {
		if len(l.paths) == 0 {
			continue
		}
		sep()
		b = append(b, '"')
		b = append(b, l.key...)
		b = append(b, `":[`...)
		for i, p := range l.paths {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, p)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}
