package hook_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/hook"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// geminiBefore is Gemini CLI 0.61's BeforeTool input (hookEventHandler's
// createBaseInput plus tool_name, tool_input and, when Gemini found the
// server's config, mcp_context).
func geminiBefore(toolName string, mcpContext map[string]any) []byte {
	ev := map[string]any{
		"session_id": "g1", "transcript_path": "/home/u/.gemini/tmp/chat.json", "cwd": "/home/u/src/p",
		"hook_event_name": "BeforeTool", "timestamp": "2026-11-28T06:00:00.000Z",
		"tool_name": toolName, "tool_input": map[string]any{"path": "a.txt"},
	}
	if mcpContext != nil {
		ev["mcp_context"] = mcpContext
	}
	b, _ := json.Marshal(ev)
	return b
}

func servers(names ...string) hook.ServerNames {
	return func(string) ([]string, error) { return names, nil }
}

// Without mcp_context, Gemini's mcp_<server>_<tool> names resolve against
// the servers Gemini is configured with, and a name two of them could own,
// one no configured server settles, or one Gemini cut short, blocks the
// call with a note that says why, instead of deciding on a guessed server.
func TestGeminiToolNamesResolveAgainstConfiguredServersOrFailClosed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		toolName   string
		configured []string
		server     string
		tool       string
		mcp        bool
		err        string
	}{
		{"a tool name with underscores", "mcp_github_create_issue", []string{"github"}, "github", "create_issue", true, ""},
		{"a server name with underscores", "mcp_my_srv_read_file", []string{"my_srv", "other"}, "my_srv", "read_file", true, ""},
		{"the longer server when only it is configured", "mcp_a_b_c", []string{"a_b"}, "a_b", "c", true, ""},
		{"the shorter server when only it is configured", "mcp_a_b_c", []string{"a"}, "a", "b_c", true, ""},
		{"one split needs no config", "mcp_fs_read", nil, "fs", "read", true, ""},
		{"a server named mcp gets no second prefix", "mcp_search", []string{"mcp"}, "mcp", "search", true, ""},
		{"a server named mcp_x gets no second prefix", "mcp_x_run", []string{"mcp_x"}, "mcp_x", "run", true, ""},
		{"a sanitized server name", "mcp_my_srv_v2_read", []string{"my srv/v2"}, "my srv/v2", "read", true, ""},
		{"an older release's server__tool", "github__create_issue", []string{"github"}, "github", "create_issue", true, ""},
		{"a server__tool of no configured server is Gemini's", "github__create_issue", nil, "gemini", "github__create_issue", false, ""},
		{"Gemini's own tool", "run_shell_command", []string{"fs"}, "gemini", "run_shell_command", false, ""},
		{"two configured servers fit", "mcp_a_b_c", []string{"a", "a_b"}, "", "", false, `fits two of Gemini CLI's configured servers`},
		{"no configured server settles two splits", "mcp_my_srv_t", []string{"fs"}, "", "", false, `can be read 2 ways`},
		{"nothing configured and two splits", "mcp_my_srv_t", nil, "", "", false, `no MCP server is configured`},
		{"Claude Code's form is not Gemini's", "mcp__fs__read", []string{"fs"}, "", "", false, `can be read 2 ways`},
		{"no tool at all", "mcp_fs", []string{"fs"}, "", "", false, `names no server and tool`},
		{"a name Gemini cut short", hook.GeminiValidName("github", strings.Repeat("very_long_tool_name_", 4)), []string{"github"}, "", "", false, `cut short by Gemini CLI`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ev, err := hook.ParseWith(hook.Gemini, geminiBefore(c.toolName, nil), servers(c.configured...))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("ParseWith(%q) = %+v, %v; want an error with %q", c.toolName, ev, err, c.err)
				}
				if !strings.Contains(err.Error(), c.toolName) {
					t.Fatalf("error %q does not name the tool %q", err, c.toolName)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.Server != c.server || ev.Tool != c.tool || ev.MCP != c.mcp {
				t.Fatalf("ParseWith(%q) = (%q, %q, %v), want (%q, %q, %v)", c.toolName, ev.Server, ev.Tool, ev.MCP, c.server, c.tool, c.mcp)
			}
		})
	}
}

// mcp_context, which Gemini sends whenever it finds the server's config,
// names the server and tool exactly, so no configured list is read.
func TestGeminiMCPContextSettlesAnAmbiguousName(t *testing.T) {
	t.Parallel()
	listed := false
	ev, err := hook.ParseWith(hook.Gemini, geminiBefore("mcp_a_b_c", map[string]any{
		"server_name": "a_b", "tool_name": "c", "command": "npx", "args": []string{"-y", "srv"},
	}), func(string) ([]string, error) { listed = true; return []string{"a", "a_b"}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if ev.Server != "a_b" || ev.Tool != "c" || !ev.MCP || listed {
		t.Fatalf("got (%q, %q, %v), config read %v; want (a_b, c, true) without reading the config", ev.Server, ev.Tool, ev.MCP, listed)
	}
}

// toolwarden's reading of Gemini's names is Gemini's own: the installed
// Gemini CLI's generateValidName (taken from its bundle and run by node)
// names each tool as hook.GeminiValidName does, and ParseWith resolves
// each name back to its server and tool.
func TestGeminiValidNameIsGeminiCLIsOwn(t *testing.T) {
	t.Parallel()
	fn := geminiGenerateValidName(t)
	pairs := [][2]string{
		{"fs", "read_text_file"}, {"my_srv", "do_it"}, {"mcp", "search"}, {"mcp_tools", "run"},
		{"my srv/v2", "read"}, {"github", "create-issue.v2:x"}, {"sérvér", "outil"}, {"emoji😀", "t"},
		{"github", strings.Repeat("very_long_tool_name_", 4)},
	}
	var js strings.Builder
	js.WriteString(fn + "\nconst pairs = " + mustJSON(t, pairs) + ";\nconsole.log(JSON.stringify(pairs.map(([s, t]) => generateValidName(`${s}_${t}`))));\n")
	out, err := exec.Command("node", "-e", js.String()).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}
	for i, p := range pairs {
		if got := hook.GeminiValidName(p[0], p[1]); got != want[i] {
			t.Errorf("GeminiValidName(%q, %q) = %q, Gemini CLI names it %q", p[0], p[1], got, want[i])
		}
		if len(want[i]) == 63 && strings.Contains(want[i], "...") {
			continue // cut short: only mcp_context can say
		}
		ev, err := hook.ParseWith(hook.Gemini, geminiBefore(want[i], nil), servers(p[0], "other"))
		if err != nil {
			t.Errorf("ParseWith(%q): %v", want[i], err)
			continue
		}
		if ev.Server != p[0] || !ev.MCP {
			t.Errorf("ParseWith(%q) = server %q, want %q", want[i], ev.Server, p[0])
		}
	}
}

// geminiGenerateValidName is the source of the installed Gemini CLI's
// generateValidName, with the constant it reads, for node to run.
func geminiGenerateValidName(t *testing.T) string {
	t.Helper()
	testkit.LookPath(t, "node")
	dir := testkit.Path("scripts", "npm", "node_modules", "@google", "gemini-cli", "bundle")
	files, _ := filepath.Glob(filepath.Join(dir, "*.js"))
	if len(files) == 0 {
		testkit.Need(t, "Gemini CLI", errors.New("no *.js in "+dir))
	}
	fnRe := regexp.MustCompile(`(?s)\nfunction generateValidName\(\w+\) \{\n.*?\n\}\n`)
	maxRe := regexp.MustCompile(`\nvar MAX_FUNCTION_NAME_LENGTH = \d+;`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fn, max := fnRe.Find(data), maxRe.Find(data)
		if fn != nil && max != nil {
			return string(max) + "\nconst debugLogger = { warn() {} };" + string(fn)
		}
	}
	t.Fatalf("no generateValidName in %s: Gemini CLI changed how it names MCP tools; read its source again", dir)
	return ""
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
