package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The official TypeScript SDK client works through wrap: listing, calls,
// and approval prompts by elicitation (accept and decline), in front of a
// TypeScript server (server-filesystem) and a Go one (testserver).
func TestTypeScriptClientInterop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hi from disk"), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("server-filesystem", func(t *testing.T) {
		t.Parallel()
		fsBin := npmServer(t, "mcp-server-filesystem")
		a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
		res := runTS(t, true, []string{"allow_once", "decline"}, []tsStep{
			{Op: "list"},
			{Op: "call", Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(dir, "hello.txt")}},
			{Op: "call", Name: "write_file", Arguments: map[string]any{"path": a, "content": "A"}},
			{Op: "call", Name: "write_file", Arguments: map[string]any{"path": b, "content": "B"}},
		}, twBin, wrapArgs(t, "fs", nil, fsBin, dir)...)
		r := res.Results
		if len(r) != 4 || !contains(r[0].Tools, "write_file") || !contains(r[0].Tools, "read_text_file") {
			t.Fatalf("list: %+v", r)
		}
		if r[1].IsError || r[1].Text != "hi from disk" {
			t.Fatalf("read: %+v", r[1])
		}
		if r[2].IsError || r[2].Thrown != "" || !fileExists(a) {
			t.Fatalf("write accepted: %+v", r[2])
		}
		if !r[3].IsError || fileExists(b) {
			t.Fatalf("write declined: %+v", r[3])
		}
		if len(res.Asked) != 2 {
			t.Fatalf("asked %d times, want 2", len(res.Asked))
		}
		mustContain(t, res.Asked[0].Message, "write_file")
		mustContain(t, res.Asked[0].Message, a)
		js, _ := json.Marshal(res.Asked[0].RequestedSchema)
		mustContain(t, string(js), `"allow_session"`)
	})

	t.Run("testserver without elicitation", func(t *testing.T) {
		t.Parallel()
		res := runTS(t, false, nil, []tsStep{
			{Op: "call", Name: "echo", Arguments: map[string]any{"message": "ts"}},
			{Op: "call", Name: "write", Arguments: map[string]any{"what": "x"}},
		}, twBin, wrapArgs(t, "ts", nil, testServer)...)
		r := res.Results
		if r[0].IsError || r[0].Text != "echo: ts" {
			t.Fatalf("echo: %+v", r[0])
		}
		if !r[1].IsError || !strings.Contains(r[1].Text, "cannot show approval prompts") {
			t.Fatalf("write without elicitation: %+v", r[1])
		}
	})

	// server-filesystem started with no folder takes its allowed folders
	// from the client's roots, and follows their changes: through wrap as
	// directly.
	t.Run("server-filesystem with the client's roots", func(t *testing.T) {
		t.Parallel()
		fsBin := npmServer(t, "mcp-server-filesystem")
		a, b := filepath.Join(dir, "rootA"), filepath.Join(dir, "rootB")
		for _, d := range []string{a, b} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "f.txt"), []byte("in "+filepath.Base(d)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		read := func(d string) tsStep {
			return tsStep{Op: "call", Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(d, "f.txt")}}
		}
		res := runTSScript(t, map[string]any{"roots": []string{a}}, []tsStep{
			{Op: "waitFor", Name: "list_allowed_directories", Contains: a},
			read(a), read(b),
			{Op: "setRoots", Roots: []string{b}},
			{Op: "waitFor", Name: "list_allowed_directories", Contains: b},
			read(b), read(a),
		}, twBin, wrapArgs(t, "fs", nil, fsBin)...)
		r := res.Results
		if len(r) != 7 {
			t.Fatalf("results: %+v", r)
		}
		if !strings.Contains(r[0].Text, a) || strings.Contains(r[0].Text, b) {
			t.Errorf("allowed folders from the first roots: %q", r[0].Text)
		}
		if r[1].IsError || r[1].Text != "in rootA" || !r[2].IsError {
			t.Errorf("reads under roots [A]: %+v, %+v", r[1], r[2])
		}
		if !strings.Contains(r[4].Text, b) || strings.Contains(r[4].Text, a) {
			t.Errorf("allowed folders after the roots changed: %q", r[4].Text)
		}
		if r[5].IsError || r[5].Text != "in rootB" || !r[6].IsError {
			t.Errorf("reads under roots [B]: %+v, %+v", r[5], r[6])
		}
	})
}
