package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/fakesecrets"
	"github.com/toolwarden/toolwarden/plugins"
)

// The secrets plugin through the real proxy, in front of server-filesystem
// and server-everything: reading a .env file that holds a (generated)
// GitHub token and AWS key marks the session, and from then on a tool that
// can send data out is denied, with a reason that names the kinds of
// secret and not the secret. In another session, the token passed as an
// argument is denied at once, and marks that session too. Reads stay
// allowed: the plugin keeps secrets in, not out of the agent's sight.
func TestProxySecretsKeepSecretsIn(t *testing.T) {
	t.Parallel()
	if _, ok := plugins.Builtin("secrets"); !ok {
		t.Skip("the first-party secrets plugin is not built into this tree")
	}
	fsBin := npmServer(t, "mcp-server-filesystem")
	everyBin := npmServer(t, "mcp-server-everything")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	g := fakesecrets.New(99)
	gh, aws := g.GitHub(), g.AWSAccessKey()
	env := filepath.Join(dir, ".env")
	if err := os.WriteFile(env, []byte("APP_ENV=production\nGITHUB_TOKEN="+gh.Token+"\nAWS_ACCESS_KEY_ID="+aws.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	readme := filepath.Join(dir, "README.md")
	if err := os.WriteFile(readme, []byte("# demo\nRun `make` and see docs/.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, "secrets.toml", fmt.Sprintf(`
[mcp_servers.fs]
command = %q
args = [%q]

[mcp_servers.everything]
command = %q

[apps.everything.tools."echo"]
hints = { can_exfiltrate = true }

[policies.secrets]
builtin = "secrets"
config = { mode = "deny" }
`, fsBin, dir, everyBin))
	leaked := func(t *testing.T, out string) {
		t.Helper()
		for _, tok := range []string{gh.Token, aws.Token, gh.Token[4:20], aws.Token[4:]} {
			if strings.Contains(out, tok) {
				t.Fatalf("the answer repeats the secret: %q", out)
			}
		}
	}

	t.Run("a result with secrets marks the session", func(t *testing.T) {
		c := startGo(t, false, answers(), twBin, proxyArgs(t, cfg)...)
		exfil := func(msg string) (string, bool) { return c.call(t, "everything__echo", map[string]any{"message": msg}) }
		if out, isErr := exfil("nothing seen yet"); isErr {
			t.Fatalf("echo before any secret: %q", out)
		}
		if out, isErr := c.call(t, "fs__read_text_file", map[string]any{"path": readme}); isErr || !strings.Contains(out, "demo") {
			t.Fatalf("read README: %q (error %v)", out, isErr)
		}
		if out, isErr := exfil("read the readme"); isErr {
			t.Fatalf("echo after an ordinary read: %q", out)
		}
		if out, isErr := c.call(t, "fs__read_text_file", map[string]any{"path": env}); isErr || !strings.Contains(out, gh.Token) {
			t.Fatalf("read .env: %q (error %v)", out, isErr)
		}
		out, isErr := exfil("a summary without the token")
		if !isErr || !strings.Contains(out, "secret_in_session") || !strings.Contains(out, "a GitHub token") ||
			!strings.Contains(out, "an AWS access key id") {
			t.Fatalf("echo after the secret was seen: want a secret_in_session deny naming both kinds, got %q (error %v)", out, isErr)
		}
		leaked(t, out)
		// Reading goes on.
		if out, isErr := c.call(t, "fs__read_text_file", map[string]any{"path": readme}); isErr {
			t.Fatalf("read after the deny: %q", out)
		}
	})

	t.Run("a secret in the arguments is denied and marks the session", func(t *testing.T) {
		c := startGo(t, false, answers(), twBin, proxyArgs(t, cfg)...)
		out, isErr := c.call(t, "everything__echo", map[string]any{"message": "here it is: " + gh.Token})
		if !isErr || !strings.Contains(out, "secret_in_arguments") || !strings.Contains(out, `"message"`) || !strings.Contains(out, "a GitHub token") {
			t.Fatalf("echo of the token: want a secret_in_arguments deny naming the argument, got %q (error %v)", out, isErr)
		}
		leaked(t, out)
		out, isErr = c.call(t, "everything__echo", map[string]any{"message": "hello"})
		if !isErr || !strings.Contains(out, "secret_in_session") {
			t.Fatalf("echo after the token was sent: want a secret_in_session deny, got %q (error %v)", out, isErr)
		}
	})
}
