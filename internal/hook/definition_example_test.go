package hook_test

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/toolwarden/toolwarden/internal/catalog"
	"github.com/toolwarden/toolwarden/internal/hook"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// A hook event names the tool; the catalog gives its definition, from the
// entry of the very server the agent runs under that name.
func ExampleEvent_Definition() {
	dir, _ := os.MkdirTemp("", "catalog")
	defer os.RemoveAll(dir)
	mine := serverspec.Identity{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/src/app"}, Dir: "/src/app"}
	_ = catalog.Write(dir, &catalog.Entry{
		Server:   "fs",
		Identity: mine,
		Source:   "toolwarden tools sync: .mcp.json (mcpServers.fs)",
		ListedAt: time.Now(),
		Tools:    []json.RawMessage{json.RawMessage(`{"name":"read_text_file","annotations":{"readOnlyHint":true}}`)},
	})
	ev, _ := hook.Parse(hook.Claude, []byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"mcp__fs__read_text_file","tool_input":{"path":"a.txt"}}`))

	// The agent runs that very server as "fs" (Places.Resolve says which).
	d := ev.Definition(dir, time.Now(), hook.Target{Identity: mine})
	fmt.Println(d.Listed, d.Tool.Declared.String())

	// Another project's "fs" is another server: the entry is not its.
	theirs := serverspec.Identity{Command: "npx", Args: []string{"-y", "some-other-server"}, Dir: "/src/other"}
	d = ev.Definition(dir, time.Now(), hook.Target{Identity: theirs})
	fmt.Println(d.Listed, d.Tool.Declared.Empty())
	// Output:
	// true readOnlyHint=true
	// false true
}
