package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On a file that cannot be used, list says what is wrong and fails, a
// selective revoke and add refuse without touching it, and reset and
// revoke --all back it up before starting an empty one.
func TestApprovalsCommandsOnABrokenFile(t *testing.T) {
	t.Parallel()
	broken := []struct{ name, content, want string }{
		{"invalid JSON", `{"version": 1, "approvals": [`, "not a valid approvals file"},
		{"an empty object", `{}`, `no "version"`},
		{"an unknown version", `{"version": 2, "approvals": []}`, "version 2"},
		{"an empty file", ``, "empty"},
		{"an entry missing fields", `{"version": 1, "approvals": [{"app": "fs"}]}`, `"server" is missing`},
	}
	h := strings.Repeat("a1", 32)
	for _, c := range broken {
		for _, clear := range [][]string{{"reset"}, {"revoke", "--all"}} {
			t.Run(c.name+", then "+strings.Join(clear, " "), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				file := filepath.Join(dir, "approvals.json")
				if err := os.WriteFile(file, []byte(c.content), 0o600); err != nil {
					t.Fatal(err)
				}
				unchanged := func(step string) {
					t.Helper()
					if b, _ := os.ReadFile(file); string(b) != c.content {
						t.Fatalf("%s rewrote the broken file:\n%s", step, b)
					}
				}
				code, _, stderr := runCLI(t, "", "approvals", "list", "--approvals", file)
				if code != exitError || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, file) {
					t.Fatalf("list: exit %d, stderr %q, want %q", code, stderr, c.want)
				}
				if code, _, stderr := runCLI(t, "", "approvals", "revoke", "--approvals", file, "--tool", "write_file"); code != exitError || !strings.Contains(stderr, "revoke --all") {
					t.Fatalf("selective revoke: exit %d, stderr %q", code, stderr)
				}
				unchanged("a selective revoke")
				if code, _, stderr := runCLI(t, "", "approvals", "add", "--approvals", file, "--server", "fs", "--tool", "write_file", "--hash", h); code != exitError || !strings.Contains(stderr, "reset") {
					t.Fatalf("add: exit %d, stderr %q", code, stderr)
				}
				unchanged("add")

				code, out, stderr := runCLI(t, "", append(append([]string{"approvals"}, clear...), "--approvals", file)...)
				if code != exitOK || !strings.Contains(out, "backed up") || !strings.Contains(out, "now holds none") {
					t.Fatalf("%v: exit %d\n%s%s", clear, code, out, stderr)
				}
				backups, _ := filepath.Glob(file + ".bak-*")
				if len(backups) != 1 {
					t.Fatalf("backups %v", backups)
				}
				if b, _ := os.ReadFile(backups[0]); string(b) != c.content {
					t.Fatalf("backup holds %q", b)
				}
				if code, out, _ := runCLI(t, "", "approvals", "list", "--approvals", file); code != exitOK || !strings.Contains(out, "no approvals") {
					t.Fatalf("list after %v: exit %d %q", clear, code, out)
				}
				if code, _, stderr := runCLI(t, "", "approvals", "add", "--approvals", file, "--server", "fs", "--tool", "write_file", "--hash", h); code != exitOK {
					t.Fatalf("add after %v: exit %d %q", clear, code, stderr)
				}
			})
		}
	}
}

// reset on a readable file backs it up too, and takes no filter.
func TestApprovalsResetBacksUpAReadableFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "approvals.json")
	h := strings.Repeat("a1", 32)
	if code, _, stderr := runCLI(t, "", "approvals", "add", "--approvals", file, "--server", "fs", "--tool", "write_file", "--hash", h); code != exitOK {
		t.Fatal(stderr)
	}
	if code, _, _ := runCLI(t, "", "approvals", "reset", "--approvals", file, "--tool", "write_file"); code != exitUsage {
		t.Fatalf("reset with a filter: exit %d", code)
	}
	code, out, stderr := runCLI(t, "", "approvals", "reset", "--approvals", file)
	if code != exitOK || !strings.Contains(out, "backed up") || stderr != "" {
		t.Fatalf("reset: exit %d\n%s%s", code, out, stderr)
	}
	if _, out, _ := runCLI(t, "", "approvals", "list", "--approvals", file); !strings.Contains(out, "no approvals") {
		t.Fatalf("list after reset: %q", out)
	}
}
