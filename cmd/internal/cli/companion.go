package cli

// Companion is the program that runs the commands that talk MCP (wrap,
// proxy, tools): toolwarden replaces itself with it for those, so that
// its own commands link no MCP client or server.
const Companion = "toolwarden-mcp"

// CompanionCommands are the commands toolwarden hands to Companion, with
// their one-line summaries (both programs' help shows them).
var CompanionCommands = []struct{ Name, Summary string }{
	{"wrap", "run one stdio MCP server behind toolwarden (same tool names)"},
	{"proxy", "serve every [mcp_servers.*] as one MCP server (<server>__<tool>)"},
	{"tools", "the tool catalog hooks read: tools sync (list the agents' MCP servers), tools list"},
}

// CompanionSummary is the summary of the companion command name, "" for
// another.
func CompanionSummary(name string) string {
	for _, c := range CompanionCommands {
		if c.Name == name {
			return c.Summary
		}
	}
	return ""
}
