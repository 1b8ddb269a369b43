package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Revocation before the next call: a tool granted "always" through wrap,
// then taken back from another process (the real `toolwarden approvals`
// binary) or by changing the file by hand, is asked about again on the
// very next call, with no wait in between, and does not run when the
// human then says no. A file that cannot be read grants nothing.
func TestAdversarialRevokeIsSeenByTheNextCall(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	takeBack := []struct {
		name string
		do   func(t *testing.T, file string)
		log  string // wrap must say this on stderr
	}{
		{"toolwarden approvals revoke", func(t *testing.T, file string) {
			mustContain(t, runTW(t, "approvals", "revoke", "--approvals", file, "--server", "fs", "--tool", "write_file"), "revoked 1")
		}, ""},
		{"toolwarden approvals reset", func(t *testing.T, file string) {
			mustContain(t, runTW(t, "approvals", "reset", "--approvals", file), "backed up")
		}, ""},
		{"deleting the file", func(t *testing.T, file string) {
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"corrupting the file", func(t *testing.T, file string) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			// Still every grant's bytes, but no longer a version 1 file.
			if err := os.WriteFile(file, []byte(strings.Replace(string(b), `"version": 1`, `"version": 2`, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "approvals file unusable"},
	}
	for _, tb := range takeBack {
		for _, legacy := range []bool{false, true} {
			name := tb.name + ", multi round-trip"
			if legacy {
				name = tb.name + ", elicitation/create"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dir, _ := filepath.EvalSymlinks(t.TempDir())
				file := filepath.Join(t.TempDir(), "approvals.json")
				ask := answers("always", "deny")
				c := startGo(t, legacy, ask, twBin, "wrap", "--app", "fs", "--approvals", file, "--", fsBin, dir)
				write := func(name string) (string, bool) {
					return c.call(t, "write_file", map[string]any{"path": filepath.Join(dir, name), "content": name})
				}

				if out, isErr := write("granted.txt"); isErr || !fileExists(filepath.Join(dir, "granted.txt")) {
					t.Fatalf("answered always: %q (error %v)", out, isErr)
				}
				if out, isErr := write("remembered.txt"); isErr || ask.count() != 1 {
					t.Fatalf("after always: %q (error %v, asked %d times, want 1)", out, isErr, ask.count())
				}

				tb.do(t, file)

				out, isErr := write("revoked.txt")
				if ask.count() != 2 {
					t.Fatalf("the call right after the approval was taken back was not asked about (asked %d times, want 2): %q", ask.count(), out)
				}
				if !isErr || fileExists(filepath.Join(dir, "revoked.txt")) {
					t.Fatalf("denied after the revoke, yet it ran: %q (error %v)", out, isErr)
				}
				if tb.log != "" {
					logged(t, c.log, tb.log)
				}
			})
		}
	}
}

// The same through the official TypeScript SDK client: the revoke runs as
// its own process between two calls of one session.
func TestAdversarialRevokeSeenByTheNextCallOfATypeScriptClient(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	file := filepath.Join(t.TempDir(), "approvals.json")
	write := func(name string) tsStep {
		return tsStep{Op: "call", Name: "write_file", Arguments: map[string]any{"path": filepath.Join(dir, name), "content": name}}
	}
	res := runTS(t, true, []string{"always", "deny"}, []tsStep{
		write("granted.txt"),
		write("remembered.txt"),
		{Op: "run", Name: twBin, Arguments: map[string]any{"args": []string{"approvals", "revoke", "--approvals", file, "--server", "fs", "--tool", "write_file"}}},
		write("revoked.txt"),
	}, twBin, "wrap", "--app", "fs", "--approvals", file, "--", fsBin, dir)
	if len(res.Results) != 4 {
		t.Fatalf("results %+v", res.Results)
	}
	for i, r := range res.Results {
		if r.Thrown != "" {
			t.Fatalf("step %d threw: %s", i, r.Thrown)
		}
	}
	if r := res.Results[1]; r.IsError || !fileExists(filepath.Join(dir, "remembered.txt")) {
		t.Fatalf("after always: %+v", r)
	}
	mustContain(t, res.Results[2].Text, "revoked 1")
	if len(res.Asked) != 2 {
		t.Fatalf("asked %d times, want 2: the call right after the revoke must be asked about", len(res.Asked))
	}
	if r := res.Results[3]; !r.IsError || fileExists(filepath.Join(dir, "revoked.txt")) {
		t.Fatalf("denied after the revoke, yet it ran: %+v", r)
	}
}

// wrap started on an approvals file it cannot use keeps serving, grants
// nothing from it (not even the grant it still holds in a newer version's
// shape), says why on stderr, and refuses an "always" answer rather than
// writing over the file: the call is not run.
func TestAdversarialRevokeUnusableFileAtStartGrantsNothing(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	file := filepath.Join(t.TempDir(), "approvals.json")
	args := []string{"wrap", "--app", "fs", "--approvals", file, "--", fsBin, dir}
	write := func(c *goClient, name string) (string, bool) {
		return c.call(t, "write_file", map[string]any{"path": filepath.Join(dir, name), "content": name})
	}
	first := startGo(t, false, answers("always"), twBin, args...)
	if out, isErr := write(first, "granted.txt"); isErr {
		t.Fatalf("always: %q", out)
	}
	_ = first.Close()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	newer := strings.Replace(string(b), `"version": 1`, `"version": 2`, 1)
	if err := os.WriteFile(file, []byte(newer), 0o600); err != nil {
		t.Fatal(err)
	}

	ask := answers("always")
	c := startGo(t, false, ask, twBin, args...)
	out, isErr := write(c, "after.txt")
	if ask.count() != 1 {
		t.Fatalf("a grant in an unusable file was honoured (asked %d times): %q", ask.count(), out)
	}
	if !isErr || fileExists(filepath.Join(dir, "after.txt")) {
		t.Fatalf("an always answer over an unusable file ran the call: %q (error %v)", out, isErr)
	}
	mustContain(t, out, "version 2")
	logged(t, c.log, "approvals file unusable")
	if b, _ := os.ReadFile(file); string(b) != newer {
		t.Fatalf("the unusable file was rewritten:\n%s", b)
	}
	if names := c.toolNames(t); !contains(names, "write_file") {
		t.Fatalf("wrap stopped serving: %v", names)
	}
}
