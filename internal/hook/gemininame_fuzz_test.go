package hook

import (
	"strings"
	"testing"
)

// FuzzSplitGemini reads arbitrary Gemini tool names against an arbitrary
// configured server: it never panics, an MCP reading always names a server
// and a tool, and a name Gemini made for a tool of the one configured
// server (short enough not to be cut) reads back as that server and a tool
// Gemini would name the same.
func FuzzSplitGemini(f *testing.F) {
	f.Add("mcp_fs_read_file", "fs", "read_file")
	f.Add("mcp_a_b_c", "a_b", "c")
	f.Add("fs__read", "fs", "read")
	f.Add("mcp_mcp_x", "mcp", "x")
	f.Add("read_file", "", "")
	f.Add("mcp_"+strings.Repeat("a", 26)+"..."+strings.Repeat("b", 30), "srv", "t\u00e9\U0001F600")
	f.Fuzz(func(t *testing.T, name, server, tool string) {
		configured := ServerNames(func(string) ([]string, error) { return []string{server}, nil })
		for _, list := range []ServerNames{nil, configured} {
			s, tl, mcp, err := splitGemini(name, "/p", list)
			if err == nil && mcp && (s == "" || tl == "") {
				t.Fatalf("splitGemini(%q) with %q = server %q tool %q: an MCP reading must name both", name, server, s, tl)
			}
		}
		if server == "" || tool == "" {
			return
		}
		made := geminiValidName(server, tool)
		if len(made) >= geminiMaxToolName {
			return
		}
		s, tl, mcp, err := splitGemini(made, "/p", configured)
		if err != nil || !mcp || s != server || geminiValidName(s, tl) != made {
			t.Fatalf("Gemini's name %q for tool %q of the one configured server %q read as server %q tool %q mcp %v err %v", made, tool, server, s, tl, mcp, err)
		}
	})
}
