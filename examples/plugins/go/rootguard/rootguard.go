// Package rootguard is toolwarden's example policy, written once per plugin
// language (examples/plugins/{go,rust,c,assemblyscript,wat}) and held to one
// conformance suite (pdk/testdata/conformance/rootguard.json):
//
//   - deny (code "rm_rf") a call whose top-level "command" argument is a
//     string that runs rm with both the -r (or -R) and -f flags;
//   - else ask (code "path_outside_root", not rememberable) when the
//     top-level "path" argument is a string that, lexically, leaves the
//     configured root: a relative path is joined to the root, the result is
//     cleaned ("." and ".." segments resolved, "/.." is "/"), and it must be
//     the root or below it;
//   - else abstain.
//
// Config: {"root": "/abs/path"} (optional; without it the path rule is off).
// A config that is not an object, or a root that is not an absolute path,
// fails with BAD_CONFIG; arguments that are not well-formed JSON fail with
// BAD_INPUT. list and observe are not handled.
//
// The package is also the native Go baseline of docs/plugin-languages.md:
// the same Handle runs natively and inside the Go guest.
package rootguard

import (
	"path"
	"strings"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// Verdict codes.
const (
	CodeRmRf        = "rm_rf"
	CodeOutsideRoot = "path_outside_root"
)

// maxShownPath is the longest cleaned path quoted in a reason, in bytes;
// longer ones are left out so a huge argument cannot blow the output limit.
const maxShownPath = 200

// New returns the plugin. Each instance configures it once, from the
// policy's config, before its first event.
func New() *pdk.Plugin {
	var root string
	return &pdk.Plugin{
		Name:    "rootguard",
		Version: "1.0.0",
		Configure: func(cfg pdk.Value) (err error) {
			root, err = Root(cfg)
			return err
		},
		Check: func(c *pdk.Check) pdk.Verdict {
			args := c.Call().Arguments()
			if args.Exists() {
				// The PDK's readers trust the host's envelope and skip
				// values without validating them; check what we read.
				if _, ok := pdk.ParseValue(args.Raw()); !ok {
					pdk.Fail(pdk.CodeBadInput, "call.arguments is not valid JSON")
				}
			}
			return Decide(root, args)
		},
	}
}

// Root reads and cleans the configured root; "" means none.
func Root(cfg pdk.Value) (string, error) {
	if !cfg.Exists() {
		return "", nil
	}
	if cfg.Kind() != pdk.Object {
		return "", pdk.ConfigError("config", "want an object")
	}
	r := cfg.Get("root")
	if !r.Exists() {
		return "", nil
	}
	s, ok := r.Str()
	if !ok || !strings.HasPrefix(s, "/") {
		return "", pdk.ConfigError("root", "want an absolute path (a string starting with /)")
	}
	return path.Clean(s), nil
}

// Decide is the policy on a call's arguments.
func Decide(root string, args pdk.Value) pdk.Verdict {
	if args.Kind() != pdk.Object {
		return pdk.NoOpinion()
	}
	if cmd, ok := args.Get("command").Str(); ok && RunsRmRf(cmd) {
		return pdk.DenyBecause(CodeRmRf, "command deletes recursively and by force (rm -rf)")
	}
	if p, ok := args.Get("path").Str(); ok && root != "" {
		if !path.IsAbs(p) {
			p = root + "/" + p
		}
		p = path.Clean(p)
		if !Within(root, p) {
			reason := "path is outside the root \"" + root + "\""
			if len(p) <= maxShownPath {
				reason = "path \"" + p + "\" is outside the root \"" + root + "\""
			}
			return pdk.AskBecause(CodeOutsideRoot, reason)
		}
	}
	return pdk.NoOpinion()
}

// Within reports whether the clean absolute path p is root or below it.
func Within(root, p string) bool {
	return root == "/" || p == root || strings.HasPrefix(p, root) && p[len(root)] == '/'
}

// RunsRmRf reports whether cmd contains "rm" at the start of a word (at the
// start or after a byte that is not a letter, digit, '_', '.' or '-'),
// followed by white space and then by one or more flag words ('-' and
// letters, separated by white space) that together hold r (or R) and f.
// White space is space, tab, newline and carriage return.
func RunsRmRf(cmd string) bool {
	for i := 0; i+2 <= len(cmd); i++ {
		if cmd[i] != 'r' || cmd[i+1] != 'm' || i > 0 && wordByte(cmd[i-1]) {
			continue
		}
		j := i + 2
		r, f := false, false
		for {
			k := j
			for k < len(cmd) && space(cmd[k]) {
				k++
			}
			if k == j || k+1 >= len(cmd) || cmd[k] != '-' || !letter(cmd[k+1]) {
				break
			}
			for k++; k < len(cmd) && letter(cmd[k]); k++ {
				switch cmd[k] {
				case 'r', 'R':
					r = true
				case 'f':
					f = true
				}
			}
			j = k
		}
		if r && f {
			return true
		}
	}
	return false
}

func space(c byte) bool  { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func letter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func wordByte(c byte) bool {
	return letter(c) || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}
