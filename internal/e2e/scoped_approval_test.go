package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An approval scoped to arguments, through wrap with the official
// TypeScript client and the real server-filesystem: argguard asks about
// every write under the folder and proposes the directory of the path it
// asked about; the human answers "allow for this session for path under
// <dir>/docs/**". A second write under docs/ (and below it) runs without
// asking, a write elsewhere in the folder is asked again, a write that
// climbs out of docs/ with ".." is asked again, and a new session asks
// again. Without scopes argguard's ask is not rememberable, and every
// write is asked.
func TestScopedApprovalCoversOnlyItsScopeThroughWrap(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"docs/sub", "src"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := writeFile(t, "scoped.toml", fmt.Sprintf(`
[policies.argguard]
builtin = "argguard"
[policies.argguard.config]
rules = [ { tool = "write_file", arg = "path", ask_glob = %q } ]
`, dir+"/**"))
	args := wrapArgs(t, "fs", []string{cfg}, fsBin, dir)
	write := func(p string) tsStep {
		return tsStep{Op: "call", Name: "write_file", Arguments: map[string]any{"path": p, "content": "x"}}
	}
	docs := filepath.Join(dir, "docs")
	res := runTS(t, true, []string{"allow_session_scoped", "allow_once", "deny"}, []tsStep{
		write(filepath.Join(docs, "a.md")),        // asked: allow for this session for docs/**
		write(filepath.Join(docs, "b.md")),        // inside: runs unasked
		write(filepath.Join(docs, "sub", "c.md")), // inside, deeper: runs unasked
		write(filepath.Join(dir, "src", "d.go")),  // outside: asked, allow once
		write(filepath.Join(docs, "..", "e.txt")), // climbs out: asked, denied
	}, twBin, args...)
	if len(res.Results) != 5 {
		t.Fatalf("results: %+v", res.Results)
	}
	for i, f := range []string{"docs/a.md", "docs/b.md", "docs/sub/c.md", "src/d.go"} {
		if r := res.Results[i]; r.IsError || !fileExists(filepath.Join(dir, f)) {
			t.Errorf("write of %s: %+v, want it to run", f, r)
		}
	}
	if r := res.Results[4]; !r.IsError || fileExists(filepath.Join(dir, "e.txt")) {
		t.Errorf("write of docs/../e.txt: %+v, want it denied by the human", r)
	}
	if len(res.Asked) != 3 {
		t.Fatalf("asked %d times, want 3 (a.md, src/d.go, docs/../e.txt): %+v", len(res.Asked), res.Asked)
	}
	// The first question offers the scoped option, titled with its scope,
	// and neither unscoped remembering option.
	schema, _ := json.Marshal(res.Asked[0].RequestedSchema)
	if got := offered(t, res.Asked[0].RequestedSchema); got != "allow_once,allow_session_scoped,deny" {
		t.Errorf("offered %s, want allow_once,allow_session_scoped,deny", got)
	}
	mustContain(t, string(schema), "Allow for this session for path under "+docs+"/**")
	for _, o := range []string{`"allow_session"`, `"always"`} {
		if strings.Contains(string(schema), o) {
			t.Errorf("the question offers %s: %s", o, schema)
		}
	}
	mustContain(t, res.Asked[0].Message, "can be remembered only for calls with path under "+docs+"/**")
	mustContain(t, res.Asked[1].Message, filepath.Join(dir, "src", "d.go"))

	// A new session holds nothing: the same write under docs/ is asked.
	res = runTS(t, true, []string{"deny"}, []tsStep{write(filepath.Join(docs, "f.md"))}, twBin, args...)
	if len(res.Asked) != 1 || len(res.Results) != 1 || !res.Results[0].IsError || fileExists(filepath.Join(docs, "f.md")) {
		t.Errorf("a new session: asked %d times, results %+v; want the write asked and denied", len(res.Asked), res.Results)
	}
}

// offered lists the options an approval form offers (its oneOf consts),
// in order.
func offered(t *testing.T, schema map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(schema)
	var s struct {
		Properties struct {
			Decision struct {
				OneOf []struct {
					Const string `json:"const"`
				} `json:"oneOf"`
			} `json:"decision"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	var consts []string
	for _, o := range s.Properties.Decision.OneOf {
		consts = append(consts, o.Const)
	}
	return strings.Join(consts, ",")
}
