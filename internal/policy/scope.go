package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/pathglob"
)

// Scope is an argument scope a plugin proposes with an ask, for remembering
// the approval: later calls of the same tool definition whose argument at
// Arg is a string matching Glob (a path, resolved as argguard resolves it)
// or Regex are covered; others are asked again. Exactly one of Glob and
// Regex is set.
type Scope struct {
	// Arg is a JSON pointer ("/path", "/options/url").
	Arg string `json:"arg"`
	// Glob is an absolute path glob in argguard's syntax ("/repo/docs/**").
	Glob string `json:"glob,omitempty"`
	// Regex is a Go RE2 regexp, matched as written: it matches anywhere
	// in the value unless anchored.
	Regex string `json:"regex,omitempty"`
}

// Bounds on what a plugin may propose.
const (
	// MaxScopes is how many scopes one verdict may propose.
	MaxScopes = 4
	// MaxScopePattern bounds a scope's glob or regex, in bytes.
	MaxScopePattern = 256
)

// CheckScope validates a proposed scope: an argument pointer that
// CheckArgumentName accepts and starts with '/', and exactly one of an
// absolute glob or a regex that compiles, each valid UTF-8 without control
// characters and at most MaxScopePattern bytes.
func CheckScope(s Scope) error {
	if !strings.HasPrefix(s.Arg, "/") {
		return fmt.Errorf("scope arg %q must be a JSON pointer (start with '/')", truncateText(s.Arg, 80))
	}
	if err := CheckArgumentName(s.Arg); err != nil {
		return fmt.Errorf("scope arg %q: %v", truncateText(s.Arg, 80), err)
	}
	if !utf8.ValidString(s.Arg) {
		return fmt.Errorf("scope arg is not valid UTF-8")
	}
	pat, kind := s.Glob, "glob"
	switch {
	case s.Glob != "" && s.Regex != "":
		return errors.New(`a scope has exactly one of "glob" and "regex", not both`)
	case s.Glob == "" && s.Regex == "":
		return errors.New(`a scope needs a non-empty "glob" or "regex"`)
	case s.Regex != "":
		pat, kind = s.Regex, "regex"
	}
	switch {
	case len(pat) > MaxScopePattern:
		return fmt.Errorf("scope %s is longer than %d bytes", kind, MaxScopePattern)
	case !utf8.ValidString(pat):
		return fmt.Errorf("scope %s is not valid UTF-8", kind)
	case strings.IndexFunc(pat, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return fmt.Errorf("scope %s %q has a control character", kind, truncateText(pat, 80))
	}
	if s.Glob != "" && !strings.HasPrefix(s.Glob, "/") {
		return fmt.Errorf("scope glob %q must be an absolute path glob (start with '/')", truncateText(s.Glob, 80))
	}
	if s.Regex != "" {
		if _, err := regexp.Compile(s.Regex); err != nil {
			return fmt.Errorf("scope regex %q: %v", truncateText(s.Regex, 80), err)
		}
	}
	return nil
}

// Match reports whether a call's arguments are inside the scope: the value
// at Arg is a string, and it matches Regex, or every path the server may
// use for it (ServerContext, as argguard resolves paths) matches Glob. A
// value that cannot be resolved (the server's working directory or home is
// unknown) is outside: lifting an ask must not guess. An invalid scope
// matches nothing.
func (s *Scope) Match(args json.RawMessage, cx *ServerContext) bool {
	if CheckScope(*s) != nil {
		return false
	}
	v, ok := pointerString(args, s.Arg)
	if !ok {
		return false
	}
	if s.Regex != "" {
		return regexp.MustCompile(s.Regex).MatchString(v)
	}
	g := pathglob.Compile(s.Glob)
	var x pathglob.Context
	if cx != nil {
		x = pathglob.Context{Cwd: absOrEmpty(cx.Cwd), Home: absOrEmpty(cx.Home)}
		for _, list := range [...][]string{cx.Roots, cx.ArgDirs} {
			for _, b := range list {
				if b = absOrEmpty(b); b != "" {
					x.Bases = append(x.Bases, b)
				}
			}
		}
	}
	all, forms := true, 0
	why := x.Resolve(v, func(p string) bool {
		forms++
		all = all && g.Match(p)
		return all
	})
	return why == "" && forms > 0 && all
}

// Describe is the scope as a prompt shows it: "path under /repo/docs/**",
// "command matching ^git push origin feature/".
func (s *Scope) Describe() string {
	name := s.Arg
	if strings.Count(name, "/") == 1 && !strings.Contains(name, "~") {
		name = name[1:]
	}
	if s.Glob != "" {
		return name + " under " + s.Glob
	}
	return name + " matching " + strconv.Quote(s.Regex)
}

// DescribeScopes joins the descriptions of several scopes.
func DescribeScopes(scopes []ProposedScope) string {
	var b strings.Builder
	for i := range scopes {
		if i > 0 {
			b.WriteString(" and ")
		}
		b.WriteString(scopes[i].Scope.Describe())
	}
	return b.String()
}

// ScopesText spells scopes one field per line in a fixed order, every
// field of each: two lists have the same text only when they would
// remember the same calls. A request state binds it (channel.Binding), so
// an answer cannot remember scopes other than the ones the human was
// shown. It lives beside Scope so that a field added there is added here.
func ScopesText(scopes []ProposedScope) string {
	var b strings.Builder
	for _, s := range scopes {
		for _, f := range [...]string{s.Plugin, s.Code, s.Arg, s.Glob, s.Regex} {
			b.WriteString(strconv.Quote(f))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func absOrEmpty(p string) string {
	if strings.HasPrefix(p, "/") {
		return p
	}
	return ""
}

// pointerString reads the string at a JSON pointer in a call's arguments.
func pointerString(args json.RawMessage, ptr string) (string, bool) {
	var v any
	if len(args) == 0 || json.Unmarshal(args, &v) != nil {
		return "", false
	}
	for _, seg := range strings.Split(ptr[1:], "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[seg]; !ok {
				return "", false
			}
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(c) || strconv.Itoa(i) != seg {
				return "", false
			}
			v = c[i]
		default:
			return "", false
		}
	}
	s, ok := v.(string)
	return s, ok
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
