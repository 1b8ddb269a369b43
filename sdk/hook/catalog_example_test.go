package hook_test

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/toolwarden/toolwarden/sdk/hook"
)

// A hook event names the tool; the catalog gives its definition.
func ExampleEvent_Definition() {
	dir, _ := os.MkdirTemp("", "catalog")
	defer os.RemoveAll(dir)
	_ = hook.WriteCatalog(dir, &hook.CatalogEntry{
		Server:   "fs",
		Source:   "toolwarden tools sync: .mcp.json (mcpServers.fs)",
		ListedAt: time.Now(),
		Tools:    []json.RawMessage{json.RawMessage(`{"name":"read_text_file","annotations":{"readOnlyHint":true}}`)},
	})
	ev, _ := hook.Parse(hook.Claude, []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"mcp__fs__read_text_file","tool_input":{"path":"a.txt"}}`))

	d := ev.Definition(dir, time.Now())
	fmt.Println(d.Listed, d.Tool.Declared.String())

	ev, _ = hook.Parse(hook.Claude, []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"mcp__github__create_issue","tool_input":{}}`))
	d = ev.Definition(dir, time.Now())
	fmt.Println(d.Listed, d.Tool.Declared.Empty())
	// Output:
	// true readOnlyHint=true
	// false true
}
