package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// starterConfig is the commented config init writes: Codex's defaults made
// explicit (destructive and open-world tools asked, read-only tools run),
// plus the first-party plugins on with a few argument rules no one wants
// to do without. found lists the servers init saw, so the user can tune
// each by name.
func starterConfig(path string, found []*agentFile, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# toolwarden configuration, written by "toolwarden init" on %s.
#
# toolwarden decides every MCP tool call your agents make: allow it, ask you,
# or deny it. Check this file after editing it:
#
#   toolwarden validate --config %s
#
# Every key is explained in docs/configuration.md. toolwarden also reads
# Codex's config.toml as it is: [apps.*] and [mcp_servers.*] mean the same.

# Asks reach you as approval prompts in the agent (MCP elicitation):
# allow once, for this session, always, or deny. "never" would turn every
# ask into a deny.
approval_policy = "on-request"

# Defaults for every server. In toolwarden every MCP server is an app named
# after its entry in your agent's config ("fs" in [mcp_servers.fs]).
[apps._default]
enabled = true
# Show destructive and open-world tools, but (below) ask before they run.
# false hides them from the agent altogether.
destructive_enabled = true
open_world_enabled = true
# "auto": read-only tools run; tools that may be destructive or may reach
# the open world (hints unset count as both) are asked about.
# "writes" asks for everything not read-only, "prompt" asks for everything.
default_tools_approval_mode = "auto"
# Believe a server's readOnlyHint/destructiveHint only while its tool
# definitions stay as first seen; a changed definition is trusted no more.
trust = "pinned"
`, now.UTC().Format("2006-01-02"), path)

	names := serverNames(found)
	if len(names) > 0 {
		b.WriteString("\n# The MCP servers init found in your agents' configs. To tune one, uncomment\n# its table (and see docs/configuration.md):\n")
		for _, n := range names {
			fmt.Fprintf(&b, "#\n# %s\n# [apps.%s]\n# destructive_enabled = false            # hide its destructive tools\n# default_tools_approval_mode = \"writes\"  # ask for everything that is not read-only\n", n.where, quoteTOMLKey(n.name))
		}
	}

	b.WriteString(`
# Policy plugins: sandboxed WebAssembly, first-party ones embedded in the
# binary. They run in this order; their verdicts combine as deny > ask >
# allow. See docs/plugins.md.

# The lethal trifecta: once a session has read private data and seen
# untrusted content, any tool that could send data out is asked about.
[policies.trifecta]
builtin = "trifecta"
config = { mode = "ask" }

# Argument rules. Paths are judged as the server resolves them ("~" is the
# server's home; relative paths against its working folder).
[policies.argguard]
builtin = "argguard"
[policies.argguard.config]
rules = [
  # Never write, edit, move or delete anything under ~/.ssh ...
  { tool = "write_*", arg = "path", deny_glob = "~/.ssh/**", reason = "writes under ~/.ssh are denied" },
  { tool = "edit_*", arg = "path", deny_glob = "~/.ssh/**", reason = "edits under ~/.ssh are denied" },
  { tool = "create_*", arg = "path", deny_glob = "~/.ssh/**", reason = "writes under ~/.ssh are denied" },
  { tool = "delete_*", arg = "path", deny_glob = "~/.ssh/**", reason = "deletes under ~/.ssh are denied" },
  { tool = "move_*", arg = "source", deny_glob = "~/.ssh/**", reason = "moves out of ~/.ssh are denied" },
  { tool = "move_*", arg = "destination", deny_glob = "~/.ssh/**", reason = "moves into ~/.ssh are denied" },
  # ... and ask before anything else there is read.
  { arg = "path", ask_glob = "~/.ssh/**", reason = "reads under ~/.ssh need your approval" },
  # A shell command that deletes recursively is asked about, every time.
  { arg = "command", ask_regex = '\brm\s+(\S+\s+)*(-[a-zA-Z]*[rR]|--recursive)', reason = "recursive rm needs your approval" },
  { arg = "cmd", ask_regex = '\brm\s+(\S+\s+)*(-[a-zA-Z]*[rR]|--recursive)', reason = "recursive rm needs your approval" },
]

# Your own plugins, in Go, Rust, C, AssemblyScript or WAT (docs/plugins.md):
# [policies.mine]
# wasm = "plugins/mine.wasm"    # relative to this file's folder
`)
	return b.String()
}

type foundServer struct{ name, where string }

// serverNames lists each server name once, with where it was found.
func serverNames(found []*agentFile) []foundServer {
	var out []foundServer
	index := map[string]int{}
	for _, f := range found {
		for _, s := range f.servers {
			// Names come from files a cloned project may control: a line
			// break in one must not start an active line of the config.
			where := commentSafe(fmt.Sprintf("%s (%s): %s", s.name, f.agent, displayCommand(s)))
			if i, ok := index[s.name]; ok {
				out[i].where += "\n#   also " + commentSafe(fmt.Sprintf("%s (%s)", s.name, f.agent))
				continue
			}
			index[s.name] = len(out)
			out = append(out, foundServer{s.name, where})
		}
	}
	return out
}

// displayCommand is an entry's command line on one line, for reports.
func displayCommand(s agentServer) string {
	switch {
	case s.remote:
		return "remote (HTTP) server"
	case s.unknown != "":
		return "unreadable entry: " + s.unknown
	}
	parts := append([]string{s.command}, s.args...)
	for i, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t\n\"'\\$`") {
			parts[i] = fmt.Sprintf("%q", p)
		}
	}
	line := strings.Join(parts, " ")
	line = strings.ReplaceAll(line, "\n", " ")
	if len(line) > 120 {
		line = line[:117] + "..."
	}
	return line
}

// quoteTOMLKey quotes a key that is not bare.
func quoteTOMLKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isBareKeyChar(k[i]) {
			return tomlString(k)
		}
	}
	return k
}

// commentSafe keeps text on one comment line: control characters (line
// breaks included) are written as escapes.
func commentSafe(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) && !strings.ContainsAny(s, "\u2028\u2029") {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
