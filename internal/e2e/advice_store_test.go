package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/store/pgtest"
)

// With a shared store, "always" approvals live in it and the approvals
// file is never read: a refusal that told the user to add one to a file
// would send them to a command that changes nothing. wrap's refusal to a
// client that cannot elicit names the store and the scope the host would
// give the grant, never --approvals; the command it
// names, run as written, makes the call go through in a new session. A
// Postgres URL with a password is not printed: the command reads
// $TOOLWARDEN_STORE, and the note shows the URL with the password hidden.
func TestWrapWithAStoreAdvisesApprovalsAddWithThatStoreAndTheCommandWorks(t *testing.T) {
	for _, e := range []struct {
		name string
		url  func(t *testing.T) string
		// arg is the --store argument the advice must give.
		arg func(url string) string
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "store.db") },
			func(url string) string { return "--store " + url + " --scope " }},
		{"postgres", func(t *testing.T) string { return pgtest.Shared(t).URL },
			func(string) string { return `--store "$TOOLWARDEN_STORE" --scope ` }},
	} {
		t.Run(e.name, func(t *testing.T) {
			url := e.url(t)
			args := []string{"wrap", "--app", "ts", "--store", url, "--", testServer}
			c := startGo(t, false, nil, twBin, args...)
			out, isErr := c.call(t, "write", map[string]any{"what": "x"})
			if !isErr {
				t.Fatalf("want a tool error, got %q", out)
			}
			mustContain(t, out, "needs the user's approval")
			mustContain(t, out, "toolwarden approvals add "+e.arg(url))
			mustContain(t, out, " --server ts --tool write --hash ")
			if strings.Contains(out, "--approvals") {
				t.Fatalf("the advice names an approvals file, which a host with a store never reads:\n%s", out)
			}
			if pw := adviceURLPassword(url); pw != "" && strings.Contains(out, pw) {
				t.Fatalf("the advice shows the store's password:\n%s", out)
			}

			// Run the command as the advice words it, in a shell that has
			// TOOLWARDEN_STORE set, as the advice says.
			i := strings.Index(out, "toolwarden approvals add")
			line := out[i:]
			line = line[:strings.IndexByte(line, ';')]
			if j := strings.Index(line, " (with "); j >= 0 {
				line = line[:j]
			}
			sh := exec.Command("sh", "-c", strings.Replace(line, "toolwarden", adviceShellQuote(twBin), 1))
			sh.Env = append(os.Environ(), "TOOLWARDEN_STORE="+url)
			var stdout, stderr bytes.Buffer
			sh.Stdout, sh.Stderr = &stdout, &stderr
			if err := sh.Run(); err != nil {
				t.Fatalf("the advised command %q: %v\n%s%s", line, err, stdout.String(), stderr.String())
			}
			c2 := startGo(t, false, nil, twBin, args...)
			if out, isErr := c2.call(t, "write", map[string]any{"what": "y"}); isErr || out != "wrote y" {
				t.Fatalf("after the advised approvals add: %q (error %v)", out, isErr)
			}
		})
	}
}

// The file-backed wrap still names its file (the store's advice must not
// leak into a host that has none).
func TestWrapWithAnApprovalsFileStillAdvisesThatFile(t *testing.T) {
	t.Parallel()
	approvals := filepath.Join(t.TempDir(), "approvals.json")
	c := startGo(t, false, nil, twBin, "wrap", "--app", "ts", "--approvals", approvals, "--", testServer)
	out, _ := c.call(t, "write", map[string]any{"what": "x"})
	mustContain(t, out, `toolwarden approvals add --approvals "`+approvals+`" --server ts --tool write`)
	if strings.Contains(out, "--store") {
		t.Fatalf("a file-backed refusal names a store:\n%s", out)
	}
}

// adviceURLPassword is the password in a URL's user part ("" none).
func adviceURLPassword(url string) string {
	_, rest, ok := strings.Cut(url, "://")
	if !ok {
		return ""
	}
	user, _, ok := strings.Cut(rest, "@")
	if !ok {
		return ""
	}
	_, pw, _ := strings.Cut(user, ":")
	return pw
}

func adviceShellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
