package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// From idea to a plugin enforced in front of a real MCP server, through the
// real binary: `plugin new`, the project's build.sh, `plugin test`, then the
// one edit a user makes (the tool to block) and wrap with the generated
// config in front of server-filesystem, driven by the official TypeScript
// client. The blocked tool is gone from tools/list and a call to it is
// refused before it reaches the server.
func TestScaffoldedPluginIsEnforcedThroughWrap(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir := filepath.Join(t.TempDir(), "no-write")
	tw := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(twBin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("toolwarden %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	tw("plugin", "new", "--lang", "c", "--dir", dir, "no-write")
	var out bytes.Buffer
	build := exec.Command(filepath.Join(dir, "build.sh"))
	build.Stdout, build.Stderr = &out, &out
	if err := build.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			testkit.Need(t, "clang for wasm32", errors.New(out.String()))
		}
		t.Fatalf("build.sh: %v\n%s", err, out.String())
	}
	mustContain(t, tw("plugin", "test", filepath.Join(dir, "no-write.wasm"), filepath.Join(dir, "cases.json")), "PASS: 6/6")

	cfg := filepath.Join(dir, "toolwarden.toml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, bytes.Replace(b, []byte(`blocked_tool = "delete_everything"`), []byte(`blocked_tool = "write_file"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}

	served := t.TempDir()
	served, _ = filepath.EvalSymlinks(served)
	os.WriteFile(filepath.Join(served, "hello.txt"), []byte("hi"), 0o600)
	target := filepath.Join(served, "new.txt")
	res := runTS(t, false, nil, []tsStep{
		{Op: "list"},
		{Op: "call", Name: "write_file", Arguments: map[string]any{"path": target, "content": "x"}},
		{Op: "call", Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(served, "hello.txt")}},
	}, twBin, wrapArgs(t, "fs", []string{cfg}, fsBin, served)...)
	r := res.Results
	if len(r) != 3 {
		t.Fatalf("results: %+v", r)
	}
	if contains(r[0].Tools, "write_file") || !contains(r[0].Tools, "read_text_file") {
		t.Errorf("tools/list: want write_file hidden by the plugin, read_text_file listed: %v", r[0].Tools)
	}
	if !r[1].IsError || !strings.Contains(r[1].Text, "no-write") || fileExists(target) {
		t.Errorf("write_file: want it refused by the plugin, not run: %+v (file written: %v)", r[1], fileExists(target))
	}
	if r[2].IsError || r[2].Text != "hi" {
		t.Errorf("read_text_file: %+v", r[2])
	}
}
