package plugin

import (
	"errors"
	"fmt"

	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// scopes reads a check verdict's "scopes": an array of 1 to
// policy.MaxScopes objects {"arg": pointer, "glob"|"regex": pattern}, each
// valid by policy.CheckScope, with no other key and no key twice. A scope
// lifts asks later (it is an approval the human grants once), so anything
// odd is a bad output rather than skipped.
func scopes(r *rawjson.Reader) ([]policy.Scope, error) {
	if r.Peek() != '[' {
		return nil, r.Fail(`"scopes" must be an array of objects`)
	}
	var out []policy.Scope
	more, err := r.BeginArray()
	if err == nil && !more {
		err = errors.New(`"scopes" is empty: leave it out instead`)
	}
	for err == nil && more {
		if len(out) == policy.MaxScopes {
			err = fmt.Errorf(`"scopes" has more than %d entries`, policy.MaxScopes)
			break
		}
		var s policy.Scope
		if s, err = scope(r, len(out)); err != nil {
			break
		}
		out = append(out, s)
		more, err = r.More(']')
	}
	return out, err
}

func scope(r *rawjson.Reader, n int) (policy.Scope, error) {
	var s policy.Scope
	if r.Peek() != '{' {
		return s, r.Fail(fmt.Sprintf("scopes[%d] must be an object", n))
	}
	seen := map[string]bool{}
	more, err := r.BeginObject()
	for err == nil && more {
		var k []byte
		if k, err = r.Key(); err != nil {
			break
		}
		key := string(k)
		if seen[key] {
			err = fmt.Errorf("scopes[%d]: key %q twice", n, truncate(key, 32))
			break
		}
		seen[key] = true
		var dst *string
		switch key {
		case "arg":
			dst = &s.Arg
		case "glob":
			dst = &s.Glob
		case "regex":
			dst = &s.Regex
		default:
			err = fmt.Errorf(`scopes[%d]: unknown key %q (want "arg" and one of "glob", "regex")`, n, truncate(key, 32))
		}
		if err != nil {
			break
		}
		if *dst, err = r.StringValue(); err != nil {
			err = fmt.Errorf("scopes[%d].%s: %w", n, key, err)
			break
		}
		more, err = r.More('}')
	}
	if err == nil {
		if err = policy.CheckScope(s); err != nil {
			err = fmt.Errorf("scopes[%d]: %w", n, err)
		}
	}
	return s, err
}

// checkVerdictScopes holds scopes to what they are for: an ask that is not
// remembered as a whole, one scope per argument the ask names, each
// argument at most once.
func checkVerdictScopes(v *policy.PluginVerdict) error {
	if len(v.Scopes) == 0 {
		return nil
	}
	if v.Verdict != policy.Ask || v.Remember {
		return errors.New(`"scopes" go only with decision "ask" and remember false`)
	}
	named := map[string]bool{}
	for _, a := range v.Arguments {
		named[policy.ArgumentPointer(a)] = true
	}
	seen := map[string]bool{}
	for i, s := range v.Scopes {
		if !named[s.Arg] {
			return fmt.Errorf(`scopes[%d]: arg %q is not one of the verdict's "arguments"`, i, truncate(s.Arg, 80))
		}
		if seen[s.Arg] {
			return fmt.Errorf("scopes[%d]: a second scope for %q (one scope per argument)", i, truncate(s.Arg, 80))
		}
		seen[s.Arg] = true
	}
	return nil
}
