package hook_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/catalog"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/hook"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

var listedAt = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fsID is the server the agent runs as "fs" in these tests; otherFS is
// another project's server of that name (same command, other folder).
var (
	fsID    = serverspec.Identity{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/work/a"}, Dir: "/work/a"}
	otherFS = serverspec.Identity{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/work/b"}, Dir: "/work/b"}
	fsRuns  = hook.Target{Identity: fsID}
)

func writeCatalog(t *testing.T, dir string) { t.Helper(); writeCatalogOf(t, dir, fsID) }

func writeCatalogOf(t *testing.T, dir string, id serverspec.Identity) {
	t.Helper()
	err := catalog.Write(dir, &catalog.Entry{Server: "fs", Identity: id, Source: "test", ListedAt: listedAt, Tools: []json.RawMessage{
		json.RawMessage(`{"name":"read_text_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`),
	}})
	if err != nil {
		t.Fatal(err)
	}
}

func event(t *testing.T, toolName string) *hook.Event {
	t.Helper()
	ev, err := hook.Parse(hook.Claude, []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"`+toolName+`","tool_input":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// The catalog only adds what a server declared. Whatever is wrong with it
// (missing, corrupt, not listing the tool, off), the tool is known by name
// alone, so the spec's pessimistic defaults apply, and the reason says why.
func TestACatalogThatCannotHelpLeavesThePessimisticDefaults(t *testing.T) {
	t.Parallel()
	bare := hook.NameOnly("read_text_file")
	cases := []struct {
		name    string
		setup   func(dir string) string
		tool    string
		note    string
		warning bool
		target  *hook.Target
	}{
		{"no catalog folder", func(dir string) string { return filepath.Join(dir, "none") }, "mcp__fs__read_text_file", "not in the tool catalog", false, nil},
		{"catalog off", func(string) string { return "" }, "mcp__fs__read_text_file", "no tool catalog", false, nil},
		{"a corrupt entry", func(dir string) string {
			os.WriteFile(filepath.Join(dir, catalog.FileName("fs", fsID)), []byte(`{"version":2,"server":"fs","tools":[{"name":"read_text_file","annotations":{"readOnlyHint":true}}]`), 0o600)
			return dir
		}, "mcp__fs__read_text_file", "cannot be read", true, nil},
		{"another name's entry copied under this name", func(dir string) string {
			writeCatalog(t, dir)
			data, _ := os.ReadFile(filepath.Join(dir, catalog.FileName("fs", fsID)))
			os.WriteFile(filepath.Join(dir, catalog.FileName("gh", fsID)), data, 0o600)
			return dir
		}, "mcp__gh__read_text_file", "cannot be read", true, nil},
		{"another server's entry of the same name", func(dir string) string { writeCatalogOf(t, dir, otherFS); return dir },
			"mcp__fs__read_text_file", `other servers named "fs" than the one the agent runs`, false, nil},
		{"an old-format entry, which says no identity", func(dir string) string {
			os.WriteFile(filepath.Join(dir, "fs.json"), []byte(`{"version":1,"server":"fs","source":"s","listed_at":"2026-01-02T03:04:05Z","tools":[{"name":"read_text_file","annotations":{"readOnlyHint":true}}]}`), 0o600)
			return dir
		}, "mcp__fs__read_text_file", "old format", false, nil},
		{"a server the agent does not run", func(dir string) string { writeCatalog(t, dir); return dir },
			"mcp__fs__read_text_file", "has not been approved", false, &hook.Target{Why: "server \"fs\" of the project's .mcp.json has not been approved"}},
		{"a tool the entry does not list", func(dir string) string { writeCatalog(t, dir); return dir }, "mcp__fs__write_file", "is not in the tool catalog's list", false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := c.setup(t.TempDir())
			target := fsRuns
			if c.target != nil {
				target = *c.target
			}
			d := event(t, c.tool).Definition(dir, listedAt, target)
			if d.Listed || !d.Tool.Declared.Empty() {
				t.Fatalf("definition from a catalog that cannot help: listed %v, hints %v", d.Listed, d.Tool.Declared.String())
			}
			if strings.HasSuffix(c.tool, "read_text_file") && d.Tool.HashHex != bare.HashHex {
				t.Fatalf("not the name-only definition")
			}
			if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], c.note) || (c.name != "catalog off" && c.target == nil && !strings.Contains(d.Notes[0], "toolwarden tools sync")) {
				t.Fatalf("notes %q, want %q and the way out", d.Notes, c.note)
			}
			if (d.Warning != nil) != c.warning {
				t.Fatalf("warning %v", d.Warning)
			}
		})
	}
}

func TestAListedToolHasItsRealDefinition(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeCatalog(t, dir)
	d := event(t, "mcp__fs__read_text_file").Definition(dir, listedAt.Add(time.Hour), fsRuns)
	if !d.Listed || d.Tool.Declared.Get(hints.ReadOnly) != hints.True || len(d.Notes) != 0 || d.Warning != nil {
		t.Fatalf("%+v", d)
	}
	if d.Tool.HashHex == hook.NameOnly("read_text_file").HashHex {
		t.Fatal("the listed definition hashes as the name alone")
	}
}

func TestAnOldEntryIsUsedAndItsAgeSaid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeCatalog(t, dir)
	d := event(t, "mcp__fs__read_text_file").Definition(dir, listedAt.Add(catalog.StaleAfter+48*time.Hour), fsRuns)
	if !d.Listed || len(d.Notes) != 1 || !strings.Contains(d.Notes[0], "listed 216h0m0s ago") || !strings.Contains(d.Notes[0], "tools sync") {
		t.Fatalf("%+v", d)
	}
}

func TestTheAgentsOwnToolsAreNotLookedUp(t *testing.T) {
	t.Parallel()
	d := event(t, "Bash").Definition(t.TempDir(), listedAt, fsRuns)
	if d.Listed || len(d.Notes) != 0 || d.Tool.Name != "Bash" {
		t.Fatalf("%+v", d)
	}
}
