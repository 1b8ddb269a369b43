package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// argguardSecretConfig denies write_file under dir/secret.
func argguardSecretConfig(t *testing.T, dir string) string {
	t.Helper()
	return writeFile(t, "paths.toml", fmt.Sprintf(`
[policies.argguard]
builtin = "argguard"
[policies.argguard.config]
rules = [ { tool = "write_file", arg = "path", deny_glob = %q } ]
`, filepath.Join(dir, "secret")+"/**"))
}

// pathAttacks are writes into dir/secret spelled so that the path's text
// is not under dir/secret: server-filesystem resolves relative paths
// against the folders it serves and "~" against its HOME, so each lands
// in dir/secret. The last is a write outside secret, which still runs.
func pathAttacks(t *testing.T, dir, tool string) (steps []tsStep, files []string, allowed string) {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		t.Skipf("no HOME to reach the folder from: %v", err)
	}
	// From ~/.. down to dir (climbing further first when dir is not under
	// the home's parent).
	up, err := filepath.Rel(filepath.Dir(home), dir)
	if err != nil {
		t.Skipf("no way from %s to %s: %v", home, dir, err)
	}
	for _, p := range []string{"secret/rel.txt", "./secret/rel2.txt", "~/../" + up + "/secret/t.txt"} {
		steps = append(steps, tsStep{Op: "call", Name: tool, Arguments: map[string]any{"path": p, "content": "leaked"}})
	}
	files = []string{"rel.txt", "rel2.txt", "t.txt"}
	steps = append(steps, tsStep{Op: "call", Name: tool, Arguments: map[string]any{"path": "public.txt", "content": "fine"}})
	return steps, files, filepath.Join(dir, "public.txt")
}

// An argguard deny glob on a folder holds against relative, ./ and ~/..
// spellings of paths inside it, through wrap with the official TypeScript
// client and the real server-filesystem: each write is denied without a
// prompt and no file appears; a write outside the folder is asked about
// and runs. Without resolution each of the three is asked about, approved
// and lands in secret/.
func TestAdversarialRelativePathsAreResolvedBeforeRules(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	for _, c := range []struct {
		name string
		// how: "args" (wrap, the folder on the server's command line),
		// "roots" (wrap, the server starts without a folder and serves the
		// client's roots) or "cwd" (proxy, [mcp_servers.fs] runs the server
		// in the folder with "." as its argument).
		how string
	}{
		{"wrap with the folder on the server's command line", "args"},
		{"wrap with the folder from the client's roots", "roots"},
		{"proxy with the folder as the configured cwd", "cwd"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, "secret"), 0o755); err != nil {
				t.Fatal(err)
			}
			tool := "write_file"
			if c.how == "cwd" {
				tool = "fs__write_file"
			}
			steps, files, allowed := pathAttacks(t, dir, tool)
			// The human would approve every write asked about: the deny
			// rule alone must stop the three.
			fields := map[string]any{"elicitation": true, "answers": []string{"allow_once", "allow_once", "allow_once", "allow_once"}}
			cfg := argguardSecretConfig(t, dir)
			args := wrapArgs(t, "fs", []string{cfg}, fsBin, dir)
			switch c.how {
			case "roots":
				fields["roots"] = []string{dir}
				args = wrapArgs(t, "fs", []string{cfg}, fsBin)
				// Wait until the server serves the roots (it asks for them
				// after initialize), so that a write could land.
				steps = append([]tsStep{{Op: "waitFor", Name: "list_allowed_directories", Contains: dir}}, steps...)
			case "cwd":
				servers := writeFile(t, "servers.toml", fmt.Sprintf("[mcp_servers.fs]\ncommand = %q\nargs = [\".\"]\ncwd = %q\n", fsBin, dir))
				args = proxyArgs(t, servers, cfg)
			}
			res := runTSScript(t, fields, steps, twBin, args...)
			r := res.Results
			if c.how == "roots" {
				r = r[1:]
			}
			if len(r) != 4 {
				t.Fatalf("results: %+v", res.Results)
			}
			for i, f := range files {
				if !r[i].IsError || !strings.Contains(r[i].Text, "arg_denied") && !strings.Contains(r[i].Text, "deny_glob") {
					t.Errorf("write %v: %+v, want denied by argguard", steps[len(steps)-4+i].Arguments["path"], r[i])
				}
				if p := filepath.Join(dir, "secret", f); fileExists(p) {
					t.Errorf("%s was written", p)
				}
			}
			mustContain(t, r[0].Text, filepath.Join(dir, "secret", "rel.txt"))
			if r[3].IsError || !fileExists(allowed) {
				t.Errorf("write outside secret/: %+v, want it to run", r[3])
			}
			if len(res.Asked) != 1 {
				t.Errorf("asked %d times, want once (denied writes are not asked about)", len(res.Asked))
			}
		})
	}
}
