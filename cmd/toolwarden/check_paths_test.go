package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toolwarden check reads a call's server_context (or --cwd), so that path
// rules can be tried on relative paths; where the directory is unknown
// they fail closed, and the trace says so.
func TestCheckResolvesPathsWithTheCallsServerContext(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte(`
[policies.argguard]
builtin = "argguard"
[policies.argguard.config]
rules = [{ tool = "write_file", arg = "path", deny_glob = "/srv/app/secret/**" }]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	call := func(ctx string) string {
		return `{"server":"fs","tool":{"name":"write_file","annotations":{"readOnlyHint":false,"destructiveHint":false,"openWorldHint":false}},"arguments":{"path":"../app/secret/x"}` + ctx + `}`
	}
	for _, c := range []struct {
		name, ctx string
		flags     []string
		code      int
		want      string
	}{
		{"a relative path is resolved against the given cwd", `,"server_context":{"cwd":"/srv/app"}`, nil, exitDeny, `(resolved: \"/srv/app/secret/x\")`},
		{"the same path from another directory is another file", `,"server_context":{"cwd":"/srv/other/sub"}`, nil, exitOK, `"decision":"allow"`},
		{"without a context --cwd gives the directory", ``, []string{"--cwd", "/srv/app"}, exitDeny, `(resolved: \"/srv/app/secret/x\")`},
		{"the call's own context beats --cwd", `,"server_context":{"cwd":"/srv/other/sub"}`, []string{"--cwd", "/srv/app"}, exitOK, `"decision":"allow"`},
		{"a cwd given as unknown fails closed and the trace says why", ``, []string{"--cwd", ""}, exitDeny,
			`{"step":"path","outcome":"unresolved","source":"/path","detail":"\"../app/secret/x\" cannot be resolved: the server's working directory is unknown (give it with --cwd, or \"cwd\" in the call's \"server_context\"); a deny or ask path rule matches what it cannot resolve (fails closed)"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := runCLI(t, call(c.ctx), append([]string{"check", "--config", cfg}, c.flags...)...)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, want %d: %s %s\nwant %s", code, c.code, out, stderr, c.want)
			}
		})
	}
}
