package pdk

// Scope is an argument scope proposed with an ask (Verdict.Scopes): if the
// human answers "allow for this session" for it, later calls of the same
// tool definition whose argument at Arg matches are not asked again, by
// this plugin for this code. Exactly one of Glob and Regex is set.
type Scope struct {
	// Arg is a JSON pointer ("/path"), one of the verdict's Arguments.
	Arg string
	// Glob is an absolute path glob, argguard's syntax ("/repo/docs/**");
	// the host matches every path the server may resolve the value to.
	Glob string
	// Regex is an RE2 regexp, matched anywhere in the value unless
	// anchored ("^git push origin feature/").
	Regex string
}

// GlobScope scopes arg (a JSON pointer) to paths matching glob.
func GlobScope(arg, glob string) Scope { return Scope{Arg: arg, Glob: glob} }

// RegexScope scopes arg (a JSON pointer) to values matching re.
func RegexScope(arg, re string) Scope { return Scope{Arg: arg, Regex: re} }

// RememberFor returns v proposing scopes for remembering an approval of it.
// It is for asks that leave Remember false and name each scope's argument
// in Arguments; the host refuses any other output as bad.
func (v Verdict) RememberFor(scopes ...Scope) Verdict {
	v.Scopes = append(v.Scopes[:len(v.Scopes):len(v.Scopes)], scopes...)
	return v
}

func appendScopes(b []byte, scopes []Scope) []byte {
	b = append(b, `,"scopes":[`...)
	for i, s := range scopes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"arg":`...)
		b = appendString(b, s.Arg)
		if s.Glob != "" {
			b = append(b, `,"glob":`...)
			b = appendString(b, s.Glob)
		}
		if s.Regex != "" {
			b = append(b, `,"regex":`...)
			b = appendString(b, s.Regex)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}
