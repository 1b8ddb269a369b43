package hook

import (
	"fmt"
	"sort"
	"strings"
)

// Gemini CLI (0.61) names an MCP tool for the model, and so in its
// BeforeTool and AfterTool events, as its generateValidName makes it of
// "<server>_<tool>": "mcp_" in front (unless the text already starts with
// "mcp_"), every character outside [A-Za-z0-9_.:-] replaced by "_", and a
// name over 63 characters cut to its first 30 and last 30 around "...".
// One "_" joins server and tool, and either may hold "_", so the name
// alone is ambiguous: mcp_a_b_c is tool b_c of server a or tool c of
// server a_b. Gemini also sends mcp_context (server_name, tool_name)
// whenever it finds the server's config, which Parse prefers; the name is
// resolved only without it, against the servers Gemini is configured with.
//
// Releases before the mcp_ names called a tool by its bare name, or
// "<server>__<tool>" when two servers' tools clashed. A bare name cannot be
// told from Gemini's own tools; "<server>__<tool>" is read when <server> is
// a configured server. Gemini never sent Claude Code's "mcp__<server>__<tool>":
// under Gemini such a name is the mcp_ form of a server whose name starts
// with "_".

const (
	geminiMCPPrefix   = "mcp_"
	geminiMaxToolName = 63 // Gemini's limit of 64, less one
	geminiLegacySep   = "__"
)

// ServerNames lists the MCP servers an agent is configured with for a
// project (the event's cwd), so that a tool name that does not say which
// server it belongs to can be resolved.
type ServerNames func(cwd string) ([]string, error)

// geminiValidName is Gemini's name for tool of server: what Gemini CLI's
// generateValidName makes of "<server>_<tool>".
func geminiValidName(server, tool string) string {
	name := server + "_" + tool
	if !strings.HasPrefix(name, geminiMCPPrefix) {
		name = geminiMCPPrefix + name
	}
	name = geminiSanitize(name)
	if len(name) > geminiMaxToolName {
		name = name[:30] + "..." + name[len(name)-30:]
	}
	return name
}

// geminiSanitize replaces what a Gemini function name may not hold by "_",
// character by character (a multi-byte character is one "_", as in
// JavaScript's replace over UTF-16 code units for the BMP).
func geminiSanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r == '_', r == '-', r == '.', r == ':':
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("__") // two UTF-16 code units
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// geminiCandidate is one reading of a Gemini tool name.
type geminiCandidate struct{ server, tool string }

// splitGemini resolves a Gemini CLI tool name sent without mcp_context.
// A name that is not an MCP tool's belongs to Gemini itself. An MCP name
// resolves to the one configured server it can belong to; failing that,
// to its only possible split. Anything else (two configured servers fit,
// no server is configured and the name splits two ways, a name Gemini cut
// short) is an error that names the readings: deciding a call on a
// guessed server could apply another server's rules.
func splitGemini(name, cwd string, servers ServerNames) (server, tool string, mcp bool, err error) {
	var configured []string
	var listErr error
	if servers != nil {
		configured, listErr = servers(cwd)
	}
	if !strings.HasPrefix(name, geminiMCPPrefix) {
		if c, ok := geminiLegacy(name, configured); ok {
			return c.server, c.tool, true, nil
		}
		return string(Gemini), name, false, nil
	}
	if len(name) == geminiMaxToolName && name[30:33] == "..." {
		return "", "", false, fmt.Errorf("the MCP tool name %q was cut short by Gemini CLI (the full name is over %d characters) and the event has no mcp_context, so its server and tool cannot be known%s", name, geminiMaxToolName, configuredNote(configured, listErr))
	}
	var fits []geminiCandidate
	for _, s := range configured {
		if c, ok := geminiFit(name, s); ok && !containsCandidate(fits, c) {
			fits = append(fits, c)
		}
	}
	if len(fits) == 1 {
		return fits[0].server, fits[0].tool, true, nil
	}
	if len(fits) > 1 {
		return "", "", false, fmt.Errorf("MCP tool name %q fits %s of Gemini CLI's configured servers, and the event has no mcp_context to say which: %s (rename a server so that neither name is the other's prefix up to \"_\")", name, plural(len(fits)), describeCandidates(fits))
	}
	splits := geminiSplits(name)
	if len(splits) == 1 {
		return splits[0].server, splits[0].tool, true, nil
	}
	if len(splits) == 0 {
		return "", "", false, fmt.Errorf("MCP tool name %q names no server and tool (Gemini CLI's form is mcp_<server>_<tool>) and the event has no mcp_context%s", name, configuredNote(configured, listErr))
	}
	return "", "", false, fmt.Errorf("MCP tool name %q can be read %d ways (%s), the event has no mcp_context and no configured server settles it%s", name, len(splits), describeCandidates(splits), configuredNote(configured, listErr))
}

// geminiFit reads name as a tool of server, if Gemini could have named one
// so: the name starts with what Gemini makes of "<server>_".
func geminiFit(name, server string) (geminiCandidate, bool) {
	if server == "" {
		return geminiCandidate{}, false
	}
	prefix := server + "_"
	if !strings.HasPrefix(prefix+"x", geminiMCPPrefix) {
		prefix = geminiMCPPrefix + prefix
	}
	prefix = geminiSanitize(prefix)
	if !strings.HasPrefix(name, prefix) || len(name) == len(prefix) {
		return geminiCandidate{}, false
	}
	return geminiCandidate{server: server, tool: name[len(prefix):]}, true
}

// geminiSplits are the readings of an mcp_ name by its underscores alone:
// each "_" after the prefix may join server and tool.
func geminiSplits(name string) []geminiCandidate {
	rest := name[len(geminiMCPPrefix):]
	var out []geminiCandidate
	for i := 1; i < len(rest)-1; i++ {
		if rest[i] == '_' {
			out = append(out, geminiCandidate{server: rest[:i], tool: rest[i+1:]})
		}
	}
	return out
}

// geminiLegacy reads an older release's "<server>__<tool>" when <server>
// is configured.
func geminiLegacy(name string, configured []string) (geminiCandidate, bool) {
	for _, s := range configured {
		if tool, ok := strings.CutPrefix(name, s+geminiLegacySep); ok && s != "" && tool != "" {
			return geminiCandidate{server: s, tool: tool}, true
		}
	}
	return geminiCandidate{}, false
}

func containsCandidate(list []geminiCandidate, c geminiCandidate) bool {
	for _, x := range list {
		if x == c {
			return true
		}
	}
	return false
}

func describeCandidates(list []geminiCandidate) string {
	parts := make([]string, len(list))
	for i, c := range list {
		parts[i] = fmt.Sprintf("server %q tool %q", c.server, c.tool)
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func plural(n int) string {
	if n == 2 {
		return "two"
	}
	return fmt.Sprint(n)
}

func configuredNote(configured []string, err error) string {
	switch {
	case err != nil:
		return fmt.Sprintf(" (Gemini CLI's MCP config could not be read: %v)", err)
	case len(configured) == 0:
		return " (no MCP server is configured in Gemini CLI's settings.json)"
	}
	return ""
}
