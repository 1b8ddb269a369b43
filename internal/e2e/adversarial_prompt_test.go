package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// The approval prompt shows what the human decides on, through wrap in
// front of the real server-filesystem and asked by the official
// TypeScript client: a write_file whose 3000 bytes of content come before
// its path. The prompt shows the path, cuts the content by itself and says
// by how much, and gives the digest of the arguments as sent. Whether it
// offers remembering follows the rule (docs/proxy.md): a cut value nobody
// flagged leaves it offered; a flagged value it cannot show in full takes
// it away, and an "allow_session" answer to such a prompt is refused and
// the call is not made.
func TestAdversarialPromptShowsThePathAfterLongContent(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	content := strings.Repeat("x", 3000)
	write := func(path, content string) tsStep {
		return tsStep{Op: "call", Name: "write_file", Arguments: map[string]any{"content": content, "path": path}}
	}
	// The TypeScript client sends the arguments as JSON.stringify writes
	// them: keys in the order given (Go's map encoding sorts them, so
	// "content" first), no spaces.
	digest := func(path, content string) string {
		sum := sha256.Sum256([]byte(`{"content":"` + content + `","path":"` + path + `"}`))
		return "sha256 " + hex.EncodeToString(sum[:])[:16]
	}

	t.Run("nothing flagged: the path is shown and remembering is offered", func(t *testing.T) {
		t.Parallel()
		a, b := filepath.Join(dir, "plain-a.txt"), filepath.Join(dir, "plain-b.txt")
		res := runTS(t, true, []string{"allow_session"}, []tsStep{write(a, content), write(b, "y")},
			twBin, wrapArgs(t, "fs", nil, fsBin, dir)...)
		if r := res.Results; len(r) != 2 || r[0].IsError || r[1].IsError || !fileExists(a) || !fileExists(b) {
			t.Fatalf("results: %+v", res.Results)
		}
		if len(res.Asked) != 1 {
			t.Fatalf("asked %d times, want 1 (the second write is remembered)", len(res.Asked))
		}
		msg := res.Asked[0].Message
		mustContain(t, msg, fmt.Sprintf("    path = %q", a))
		mustContain(t, msg, "[2744 more bytes not shown]")
		mustContain(t, msg, digest(a, content))
		if got := offered(t, res.Asked[0].RequestedSchema); got != "allow_once,allow_session,always,deny" {
			t.Errorf("offered %s", got)
		}
	})

	t.Run("a flagged value cut: no remembering, and allow_session is refused", func(t *testing.T) {
		t.Parallel()
		cfg := writeFile(t, "flagger.toml", fmt.Sprintf("[policies.flagger]\nwasm = %q\n", filepath.Join(root, "internal", "e2e", "testdata", "flagger.wasm")))
		c, d := filepath.Join(dir, "flagged-c.txt"), filepath.Join(dir, "flagged-d.txt")
		res := runTS(t, true, []string{"allow_session", "allow_once", "allow_session"},
			[]tsStep{write(c, content), write(c, content), write(d, "short")},
			twBin, wrapArgs(t, "fs", []string{cfg}, fsBin, dir)...)
		r := res.Results
		if len(r) != 3 || len(res.Asked) != 3 {
			t.Fatalf("results %+v, asked %d times", r, len(res.Asked))
		}
		if !r[0].IsError || !strings.Contains(r[0].Text, "was not offered") {
			t.Errorf("allow_session to a prompt that did not offer it: %+v", r[0])
		}
		if r[1].IsError || !fileExists(c) {
			t.Errorf("allow_once: %+v", r[1])
		}
		msg := res.Asked[0].Message
		lines := strings.Split(msg, "\n")
		first := -1
		for i, l := range lines {
			if strings.HasPrefix(l, "Arguments (") {
				first = i + 1
			}
		}
		if first < 0 || first+1 >= len(lines) || lines[first] != fmt.Sprintf("  * path = %q", c) || !strings.HasPrefix(lines[first+1], `  * content = "xxx`) {
			t.Fatalf("flagged arguments are not first, path before content:\n%s", msg)
		}
		mustContain(t, msg, digest(c, content))
		mustContain(t, msg, "cannot be remembered: the prompt cannot show everything it decides on (the flagged argument /content")
		if got := offered(t, res.Asked[0].RequestedSchema); got != "allow_once,deny" {
			t.Errorf("offered %s for a prompt that cannot show a flagged value", got)
		}
		// The same flags on values short enough to show: remembering is
		// offered, and taken.
		if got := offered(t, res.Asked[2].RequestedSchema); got != "allow_once,allow_session,always,deny" || r[2].IsError || !fileExists(d) {
			t.Errorf("short flagged values: offered %s, result %+v", got, r[2])
		}
	})
}
