package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestApprovalsAddListRevoke(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "approvals.json")
	h1, h2 := strings.Repeat("a1", 32), strings.Repeat("b2", 32)

	for _, args := range [][]string{
		{"--server", "fs", "--tool", "write_file", "--hash", h1},
		{"--server", "fs", "--tool", "edit_file", "--hash", h2},
		{"--server", "gh", "--tool", "create_issue", "--hash", h2, "--app", "github"},
	} {
		code, out, stderr := runCLI(t, "", append([]string{"approvals", "add", "--approvals", file}, args...)...)
		if code != exitOK || !strings.Contains(out, "approved") {
			t.Fatalf("add %v: exit %d %s %s", args, code, out, stderr)
		}
	}

	code, out, _ := runCLI(t, "", "approvals", "list", "--approvals", file)
	if code != exitOK || !strings.Contains(out, "write_file") || !strings.Contains(out, h1[:12]) || !strings.Contains(out, "github") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "approvals", "list", "--approvals", file, "--server", "fs", "--json")
	var grants []map[string]any
	if err := json.Unmarshal([]byte(out), &grants); code != exitOK || err != nil || len(grants) != 2 {
		t.Fatalf("list --server fs --json: exit %d %v\n%s", code, err, out)
	}

	if code, _, stderr := runCLI(t, "", "approvals", "revoke", "--approvals", file); code != exitUsage || !strings.Contains(stderr, "--all") {
		t.Fatalf("revoke without a filter: exit %d %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "", "approvals", "revoke", "--approvals", file, "--hash", "zz"); code != exitUsage {
		t.Fatalf("revoke with a bad hash: exit %d %s", code, stderr)
	}
	if code, out, _ := runCLI(t, "", "approvals", "revoke", "--approvals", file, "--hash", h2[:8]); code != exitOK || !strings.Contains(out, "revoked 2") {
		t.Fatalf("revoke by hash prefix: exit %d %s", code, out)
	}
	if code, _, _ := runCLI(t, "", "approvals", "revoke", "--approvals", file, "--tool", "nothing"); code != exitError {
		t.Fatalf("revoke matching nothing: exit %d", code)
	}
	if code, out, _ := runCLI(t, "", "approvals", "revoke", "--approvals", file, "--all"); code != exitOK || !strings.Contains(out, "revoked 1") {
		t.Fatalf("revoke --all: exit %d %s", code, out)
	}
	if _, out, _ := runCLI(t, "", "approvals", "list", "--approvals", file); !strings.Contains(out, "no approvals") {
		t.Fatalf("list after revoking everything:\n%s", out)
	}
}

func TestApprovalsUsage(t *testing.T) {
	t.Parallel()
	if code, _, _ := runCLI(t, "", "approvals"); code != exitUsage {
		t.Fatalf("no subcommand: exit %d", code)
	}
	if code, _, stderr := runCLI(t, "", "approvals", "frob"); code != exitUsage || !strings.Contains(stderr, "unknown subcommand") {
		t.Fatalf("unknown subcommand: exit %d %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "", "approvals", "add", "--approvals", filepath.Join(t.TempDir(), "a.json"), "--server", "fs", "--tool", "t", "--hash", "abcdef12"); code != exitUsage {
		t.Fatalf("add with a short hash: exit %d", code)
	}
}
