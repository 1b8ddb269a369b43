package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// maxInitBytes bounds what any one package's init may allocate in the
// toolwarden binary. Every process pays every package's init whatever the
// command (a hook event is one process), and an init that allocates much
// is doing real work at start: the JSON-schema library mcp-go's server
// imports compiled its metaschemas there (1.7 MB, ~4 ms) until
// third_party/santhosh-tekuri/jsonschema made that lazy.
const maxInitBytes = 256 << 10

var initLine = regexp.MustCompile(`(?m)^init (\S+) @[^,]+, [^,]+ clock, (\d+) bytes, (\d+) allocs$`)

func TestNoPackageInitOfTheBinaryDoesRealWork(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "toolwarden")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building toolwarden: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "version")
	cmd.Env = append(cmd.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("toolwarden version: %v\n%s", err, out)
	}
	lines := initLine.FindAllStringSubmatch(string(out), -1)
	if len(lines) < 10 {
		t.Fatalf("GODEBUG=inittrace=1 printed %d init lines, want the binary's packages:\n%s", len(lines), out)
	}
	for _, m := range lines {
		n, _ := strconv.Atoi(m[2])
		if n > maxInitBytes {
			t.Errorf("package %s allocates %d bytes (%s allocs) in its init, more than %d: every toolwarden process (each hook event) pays it", m[1], n, m[3], maxInitBytes)
		}
	}
}

// The lazily compiled metaschemas are still there when a schema is
// compiled: a schema that breaks its metaschema is refused, and a valid
// one still validates (what mcp-go's server relies on).
func TestTheSchemaLibraryStillChecksSchemasAgainstTheirMetaschema(t *testing.T) {
	c := jsonschema.NewCompiler()
	if err := c.AddResource("bad.json", map[string]any{"type": 12.0}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("bad.json"); err == nil {
		t.Fatal(`{"type": 12} compiled: the metaschema was not applied`)
	}
	if err := c.AddResource("good.json", map[string]any{"type": "object", "required": []any{"path"}}); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("good.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(map[string]any{"path": "/tmp"}); err != nil {
		t.Fatalf("a valid instance was refused: %v", err)
	}
	if err := s.Validate(map[string]any{}); err == nil {
		t.Fatal("an instance without the required key was accepted")
	}
}
