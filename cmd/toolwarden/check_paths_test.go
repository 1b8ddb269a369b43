package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toolwarden check reads a call's server_context, so that path rules can
// be tried on relative paths; without it they fail closed.
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
		code      int
		want      string
	}{
		{"a relative path is resolved against the given cwd", `,"server_context":{"cwd":"/srv/app"}`, exitDeny, `(resolved: \"/srv/app/secret/x\")`},
		{"the same path from another directory is another file", `,"server_context":{"cwd":"/srv/other/sub"}`, exitOK, `"decision":"allow"`},
		{"without a context it fails closed", ``, exitDeny, `(unresolved: the server's working directory is unknown)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := runCLI(t, call(c.ctx), "check", "--config", cfg)
			if code != c.code || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, want %d: %s %s\nwant %s", code, c.code, out, stderr, c.want)
			}
		})
	}
}
