package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// init writes the toolwarden an agent's entry runs as a full path: an
// agent started from a desktop launcher may lack the terminal's PATH.
// When "toolwarden" on PATH is this program, the PATH entry is written
// (a link an upgrade moves keeps working); else the program's own file.
func TestInitWritesAFullPathToToolwardenForAgentsStartedWithoutYourPATH(t *testing.T) {
	t.Parallel()
	binaries(t)
	self, err := filepath.EvalSymlinks(built.tw)
	if err != nil {
		t.Fatal(err)
	}
	linkDir := t.TempDir()
	link := filepath.Join(linkDir, "toolwarden")
	if err := os.Symlink(built.tw, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path, want string
	}{
		{"not on PATH: the program's own file", "/usr/bin:/bin", self},
		{"on PATH through a link: the PATH entry", linkDir + ":/usr/bin:/bin", link},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := newNewcomer(t)
			for i, kv := range n.env {
				if strings.HasPrefix(kv, "PATH=") {
					n.env[i] = "PATH=" + c.path
				}
			}
			mcp := filepath.Join(n.project, ".mcp.json")
			writeTestFile(t, mcp, `{"mcpServers": {"fs": {"command": "mcp-server-filesystem", "args": ["/src"]}}}`)
			r := n.run("", "init", "--write-agents", "--project", n.project)
			if r.code != exitOK {
				t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			b, err := os.ReadFile(mcp)
			if err != nil {
				t.Fatal(err)
			}
			cmd, args := jsonEntry(t, string(b), "mcpServers", "fs")
			if cmd != c.want || len(args) == 0 || args[0] != "wrap" {
				t.Fatalf("the entry runs %q %q, want %q wrap ...", cmd, args, c.want)
			}
			if !strings.Contains(r.stdout, "The wrapped entries run "+c.want+": a full path") {
				t.Fatalf("init does not say which toolwarden the entries run:\n%s", r.stdout)
			}
		})
	}
}

// A Codex entry an older init wrapped with toolwarden's config alone is
// named as one whose Codex rules do not count, with the fix; one that
// reads both files is left alone quietly.
func TestInitSaysWhenAWrappedCodexEntryDoesNotReadCodexsFile(t *testing.T) {
	t.Parallel()
	h := newInitHome(t)
	codex := filepath.Join(h.home, ".codex", "config.toml")
	h.write(".codex/config.toml", `[mcp_servers.old]
command = "toolwarden"
args = ["wrap", "--app", "old", "--config", "`+h.configPath()+`", "--", "mcp-old"]

[mcp_servers.new]
command = "toolwarden"
args = ["wrap", "--app", "new", "--config", "`+h.configPath()+`", "--config", "`+codex+`", "--", "mcp-new"]
`)
	code, out, stderr := h.init()
	if code != exitOK {
		t.Fatal(stderr)
	}
	initMustContain(t, out, `(already behind toolwarden, but it does not read this file, so its [apps.*] rules do not count: add "--config", "`+codex+`" after its other --config)`)
	quiet := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "new ") {
			quiet = strings.HasSuffix(line, "(already behind toolwarden)")
		}
	}
	if !quiet {
		t.Fatalf("the entry that reads both files is not left alone quietly:\n%s", out)
	}
}
