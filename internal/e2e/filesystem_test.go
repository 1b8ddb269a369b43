package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// server-filesystem under [apps.fs] destructive_enabled = false and
// approval mode "writes": the destructive tools are gone from tools/list
// and refused if called anyway, read-only tools are listed and run without
// a prompt, and the remaining write (create_directory) is asked about.
func TestFilesystemDestructiveDisabled(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello from the filesystem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, "fs.toml", `
[apps.fs]
destructive_enabled = false
default_tools_approval_mode = "writes"
`)
	for _, legacy := range []bool{false, true} {
		name := "mcp-go multi round-trip"
		if legacy {
			name = "mcp-go elicitation/create"
		}
		t.Run(name, func(t *testing.T) {
			ask := answers("allow_once", "decline", "allow_once")
			c := startGo(t, legacy, ask, twBin, wrapArgs(t, "fs", []string{cfg}, fsBin, dir)...)

			names := c.toolNames(t)
			for _, hidden := range []string{"write_file", "edit_file", "move_file"} {
				if contains(names, hidden) {
					t.Errorf("destructive tool %s is listed: %v", hidden, names)
				}
			}
			for _, shown := range []string{"read_text_file", "list_directory", "create_directory", "get_file_info"} {
				if !contains(names, shown) {
					t.Errorf("tool %s is missing: %v", shown, names)
				}
			}

			out, isErr := c.call(t, "read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")})
			if isErr || !strings.Contains(out, "hello from the filesystem") {
				t.Fatalf("read_text_file: %q (error %v)", out, isErr)
			}
			if ask.count() != 0 {
				t.Fatal("a read-only tool was asked about")
			}

			// A hidden tool called anyway: refused, never prompted, nothing written.
			target := filepath.Join(dir, "written-"+name+".txt")
			out, isErr = c.call(t, "write_file", map[string]any{"path": target, "content": "x"})
			if !isErr || !strings.Contains(out, "blocked by app configuration") || fileExists(target) || ask.count() != 0 {
				t.Fatalf("hidden write_file: %q (error %v, exists %v, asked %d)", out, isErr, fileExists(target), ask.count())
			}

			// A write is asked; "writes" asks cannot be remembered, so only
			// allow once and deny are offered.
			newDir := filepath.Join(dir, "made-"+strings.ReplaceAll(name, " ", "-"))
			out, isErr = c.call(t, "create_directory", map[string]any{"path": newDir})
			if isErr || !fileExists(newDir) {
				t.Fatalf("create_directory allowed once: %q (error %v)", out, isErr)
			}
			q := ask.last()
			mustContain(t, q.Params.Message, "create_directory")
			mustContain(t, q.Params.Message, newDir)
			schema := toJSON(t, q.Params.RequestedSchema)
			if strings.Contains(schema, "allow_session") || !strings.Contains(schema, "allow_once") {
				t.Fatalf("options for a non-rememberable ask: %s", schema)
			}

			declined := filepath.Join(dir, "declined-"+strings.ReplaceAll(name, " ", "-"))
			out, isErr = c.call(t, "create_directory", map[string]any{"path": declined})
			if !isErr || fileExists(declined) {
				t.Fatalf("create_directory declined: %q (error %v, exists %v)", out, isErr, fileExists(declined))
			}
			// Asked again: "once" is not remembered.
			again := filepath.Join(dir, "again-"+strings.ReplaceAll(name, " ", "-"))
			if out, isErr = c.call(t, "create_directory", map[string]any{"path": again}); isErr || !fileExists(again) {
				t.Fatalf("create_directory asked again: %q (error %v)", out, isErr)
			}
			if ask.count() != 3 {
				t.Fatalf("asked %d times, want 3", ask.count())
			}
		})
	}
}

// With the default approval mode (auto), write_file is destructive and
// asked; "allow for this session" lets the next writes through unasked.
func TestFilesystemAllowForSession(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	ask := answers("allow_session")
	c := startGo(t, false, ask, twBin, wrapArgs(t, "fs", nil, fsBin, dir)...)
	for i, f := range []string{"a.txt", "b.txt", "c.txt"} {
		p := filepath.Join(dir, f)
		if out, isErr := c.call(t, "write_file", map[string]any{"path": p, "content": f}); isErr || !fileExists(p) {
			t.Fatalf("write %d: %q (error %v)", i, out, isErr)
		}
	}
	if ask.count() != 1 {
		t.Fatalf("asked %d times, want 1", ask.count())
	}
	mustContain(t, toJSON(t, ask.last().Params.RequestedSchema), "allow_session")
}
