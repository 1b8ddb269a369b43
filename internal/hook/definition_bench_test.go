package hook_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolwarden/toolwarden/internal/catalog"
	"github.com/toolwarden/toolwarden/internal/hook"
)

// What the catalog costs a hook call: finding and parsing the tool's
// definition in a 14-tool entry, against the name-only definition a hook
// used before. A hook is a process per call, so compare both with the
// process start, not with each other alone.
func BenchmarkHookDefinition(b *testing.B) {
	dir := b.TempDir()
	var tools []json.RawMessage
	for i := range 13 {
		tools = append(tools, json.RawMessage(fmt.Sprintf(`{"name":"tool_%d","description":"a tool of the server, described at some length as servers do","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`, i)))
	}
	tools = append(tools, json.RawMessage(`{"name":"read_text_file","description":"Read a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`))
	if err := catalog.Write(dir, &catalog.Entry{Server: "fs", Identity: fsID, Source: "bench", ListedAt: listedAt, Tools: tools}); err != nil {
		b.Fatal(err)
	}
	ev, err := hook.Parse(hook.Claude, []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"mcp__fs__read_text_file","tool_input":{}}`))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("name only", func(b *testing.B) {
		for b.Loop() {
			_ = hook.NameOnly(ev.Tool)
		}
	})
	b.Run("from the catalog", func(b *testing.B) {
		for b.Loop() {
			if d := ev.Definition(dir, listedAt, fsRuns); !d.Listed {
				b.Fatal("not listed")
			}
		}
	})
}
