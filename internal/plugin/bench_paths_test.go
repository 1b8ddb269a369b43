package plugin

import (
	"context"
	"testing"

	"github.com/toolwarden/toolwarden/internal/policy"
)

// BenchmarkArgguardPathCheck is what resolving a path costs: a deny glob
// on an absolute path (no resolution) against the same rule on a relative
// path that resolves through the server's context (cwd, then two roots and
// a command-line folder; the last one matches), in the shipped module.
// Read "relative" as a ratio of "absolute".
func BenchmarkArgguardPathCheck(b *testing.B) {
	rt := newRuntime(b, Options{PoolSize: 1})
	p := loadBuiltin(b, rt, "argguard", map[string]any{"rules": []any{
		map[string]any{"tool": "write_file", "arg": "path", "deny_glob": "/opt/served/secret/**"},
	}})
	x := &policy.ServerContext{Cwd: "/home/me/project", Home: "/home/me", Roots: []string{"/data/a", "/data/b"}, ArgDirs: []string{"/opt/served"}}
	ctx := context.Background()
	for _, c := range []struct{ name, args string }{
		{"absolute", `{"path":"/opt/served/secret/notes.txt","content":"x"}`},
		{"relative", `{"path":"./secret/notes.txt","content":"x"}`},
	} {
		in := checkInput(c.args)
		in.Context = x
		b.Run(c.name, func(b *testing.B) {
			warm(p, in)
			benchCheck(b, policy.Deny, func() policy.PluginVerdict { return p.Check(ctx, in) })
		})
	}
}
