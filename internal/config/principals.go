package config

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// This file holds the keys that name people: who may see and call an app's
// tools (principals, groups) and whose approval counts for their asks
// (approvers), on [apps.<id>] and [apps.<id>.tools.<tool>]. The names are
// those the gateway's identities carry (`toolwarden serve`: a tokens
// file's principal and groups, an OIDC token's claims).

// GroupPrefix marks an approvers entry that names a group, not a principal.
const GroupPrefix = "group:"

// Access is who may see and call a tool, and whose approval counts for its
// asks. A nil list is "not set"; a set list, even empty, is a rule.
type Access struct {
	// Principals and Groups admit a caller by name or by one of its
	// groups; with both set either admits. Neither set: everyone.
	Principals []string
	Groups     []string
	// Approvers are principal names and "group:<name>" entries whose
	// approval counts for the tool's asks; nil: the caller's own.
	Approvers []string
}

// Restricts reports whether the rule admits only some callers.
func (a *Access) Restricts() bool { return a.Principals != nil || a.Groups != nil }

// Empty reports whether the rule sets nothing.
func (a *Access) Empty() bool { return !a.Restricts() && a.Approvers == nil }

// RequiredAccess is a requirements file's Access for an app (Tool "") or
// one of its tools (by raw name, as Codex matches managed tools): a rule
// every caller must pass on top of the user's, which no user layer can
// widen.
type RequiredAccess struct {
	Tool   string
	Access Access
	// Path is the key path of the requirement's table and At where the
	// requirements file wrote it.
	Path string
	At   Position
}

// accessKeys are the keys Access reads, for the tables that take them.
var accessKeys = []string{"principals", "groups", "approvers"}

// withAccess adds the Access keys to an [apps.<id>] or tool table's
// schema, read into a.
func (l *loader) withAccess(a *Access, f fields) fields {
	f["principals"] = func(p string, v any) { a.Principals = l.names(p, v, principalName) }
	f["groups"] = func(p string, v any) { a.Groups = l.names(p, v, groupName) }
	f["approvers"] = func(p string, v any) { a.Approvers = l.names(p, v, approverName) }
	return f
}

// refuseAccess makes the Access keys errors that say where they belong:
// [apps._default] applies to apps that have no table, and an app's own
// table replaces it, so a rule there would silently stop at the first app
// anyone configures. Who may reach the gateway at all is its
// authentication's to say ([serve.auth]).
func (l *loader) refuseAccess(f fields) fields {
	for _, k := range accessKeys {
		f[k] = func(p string, v any) {
			l.errorf(p, "%s cannot be set on [apps._default]: it names who may use one app's tools, so set it on [apps.<id>] (or [apps.<id>.tools.<tool>]); who may reach `toolwarden serve` at all is [serve.auth]'s", k)
		}
	}
	return f
}

// names reads an array of names, each checked by check (which returns
// what is wrong with it and what to write instead, or ""). Duplicates are
// errors: they are always a slip, and often the slip is a near spelling.
func (l *loader) names(p string, v any, check func(string) string) []string {
	arr, ok := asArray(v)
	if !ok {
		l.errorf(p, "expected an array of names, got %s", describe(v))
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		ep := joinIndex(p, i)
		s, ok := e.(string)
		if !ok {
			l.errorf(ep, "expected a name (a string), got %s", describe(e))
			continue
		}
		if msg := check(s); msg != "" {
			l.errorf(ep, "%s", msg)
			continue
		}
		if slices.Contains(out, s) {
			l.errorf(ep, "%s is listed twice", quote(s))
			continue
		}
		out = append(out, s)
	}
	return out
}

// nameProblem is what makes s unusable as a principal or group name: names
// are compared byte for byte, so a space or a control character at either
// end (invisible in most editors) would make a rule that never matches.
func nameProblem(s string) string {
	switch {
	case s == "":
		return "empty name: write a principal or group name, or remove the entry"
	case strings.TrimSpace(s) != s:
		return fmt.Sprintf("%s has spaces at its start or end, and names are compared exactly: write %s", quote(s), quote(strings.TrimSpace(s)))
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return fmt.Sprintf("%s holds a control character: names are printable text", quote(s))
	}
	return ""
}

func principalName(s string) string {
	if msg := nameProblem(s); msg != "" {
		return msg
	}
	if g, ok := groupRef(s); ok {
		return fmt.Sprintf("%s names a group, and principals holds principal names: move it to groups = [%s]", quote(s), quote(g))
	}
	return ""
}

func groupName(s string) string {
	if msg := nameProblem(s); msg != "" {
		return msg
	}
	if g, ok := groupRef(s); ok {
		return fmt.Sprintf("groups holds group names without a prefix: write %s", quote(g))
	}
	return ""
}

// approverName accepts a principal name or "group:<name>". A prefix in
// another case or spelling ("Group:", "groups:") is refused rather than
// read as a principal of that odd name, which nobody would be.
func approverName(s string) string {
	if msg := nameProblem(s); msg != "" {
		return msg
	}
	prefix, rest, found := strings.Cut(s, ":")
	switch {
	case !found:
		return ""
	case prefix == "group":
		if msg := nameProblem(rest); msg != "" {
			return fmt.Sprintf("%s: the group's name: %s", quote(s), msg)
		}
		return ""
	case strings.EqualFold(prefix, "group") || strings.EqualFold(prefix, "groups"):
		return fmt.Sprintf("%s: a group is written %s (lower case, singular): write %s", quote(s), quote(GroupPrefix+"<name>"), quote(GroupPrefix+rest))
	}
	return ""
}

// groupRef reports whether s is written like an approvers group entry, in
// any case, and the group it names.
func groupRef(s string) (string, bool) {
	if len(s) > len(GroupPrefix) && strings.EqualFold(s[:len(GroupPrefix)], GroupPrefix) {
		return s[len(GroupPrefix):], true
	}
	return "", false
}

// accessNarrowing warns where a tool's principals list names someone its
// app's rule can never admit: a tool's rule narrows its app's and never
// widens it, so the name is dead, and its author probably meant to admit
// them. Only a certain case is reported: an app with a groups list may
// admit anyone through a group.
func (v *validator) accessNarrowing() {
	for _, id := range sortedIDs(v.cfg.Apps) {
		a := v.cfg.Apps[id]
		if a.Principals == nil || a.Groups != nil {
			continue
		}
		p := joinKey("apps", id)
		for _, tn := range sortedIDs(a.Tools) {
			t := a.Tools[tn]
			for _, name := range t.Principals {
				if !slices.Contains(a.Principals, name) {
					tp := joinKey(joinKey(joinKey(p, "tools"), tn), "principals")
					v.warn(tp, t.Pos, "%s can never call this tool: [%s] admits only principals %s, and a tool's rule narrows its app's, never widens it; add %s to %s.principals too, or remove it here",
						quote(name), p, quotedList(a.Principals), quote(name), p)
				}
			}
		}
	}
}

// applyAccessRequirements adds r's principals, groups and approvers as
// rules every caller must pass on top of the user's own: a user layer may
// narrow them further but cannot widen them, since both must admit.
func (c *Config) applyAccessRequirements(r *Requirements) {
	for _, id := range sortedAppIDs(r.apps) {
		ra := r.apps[id]
		p := "apps." + quoteKey(id)
		if !ra.Access.Empty() {
			c.requireAccess(r, id, RequiredAccess{Access: ra.Access, Path: p, At: r.at(p)})
		}
		for _, tn := range sortedToolNames(ra.Tools) {
			if rt := ra.Tools[tn]; !rt.Access.Empty() {
				tp := p + ".tools." + quoteKey(tn)
				c.requireAccess(r, id, RequiredAccess{Tool: tn, Access: rt.Access, Path: tp, At: r.at(tp)})
			}
		}
	}
}

func (c *Config) requireAccess(r *Requirements, id string, ra RequiredAccess) {
	a := c.requiredApp(id, c.Apps[id], r.at("apps."+quoteKey(id)))
	// Clip: a clone shares the slice with the Config it came from.
	a.RequiredAccess = append(slices.Clip(a.RequiredAccess), ra)
	for _, k := range accessKeys {
		c.required[ra.Path+"."+k] = ra.At
	}
}
