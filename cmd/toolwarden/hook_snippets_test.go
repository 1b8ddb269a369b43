package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// hookSnippet is one hook set-up as the docs show it: the matcher and the
// command line the agent runs.
type hookSnippet struct {
	where, agent, matcher, command string
}

// codeBlocks returns the fenced blocks of a markdown file in language lang.
func codeBlocks(t *testing.T, path, lang string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```")
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		out = append(out, m[1])
	}
	return out
}

// docSnippets collects every hook set-up of the README and docs/hooks.md.
func docSnippets(t *testing.T) []hookSnippet {
	t.Helper()
	var out []hookSnippet
	for _, path := range []string{"../../README.md", "../../docs/hooks.md"} {
		for _, block := range codeBlocks(t, path, "json") {
			var v struct {
				Hooks map[string][]struct {
					Matcher string
					Hooks   []struct{ Type, Command string }
				}
			}
			if json.Unmarshal([]byte(block), &v) != nil || len(v.Hooks) == 0 {
				continue
			}
			for event, groups := range v.Hooks {
				if event != "PreToolUse" && event != "BeforeTool" {
					continue
				}
				for _, g := range groups {
					for _, h := range g.Hooks {
						agent := "claude"
						if event == "BeforeTool" {
							agent = "gemini"
						}
						out = append(out, hookSnippet{path + " " + event, agent, g.Matcher, h.Command})
					}
				}
			}
		}
		for _, block := range codeBlocks(t, path, "toml") {
			var v struct {
				Hooks struct {
					PreToolUse []struct {
						Matcher string
						Hooks   []struct{ Type, Command string }
					}
				}
			}
			if _, err := toml.Decode(block, &v); err != nil {
				continue
			}
			for _, g := range v.Hooks.PreToolUse {
				for _, h := range g.Hooks {
					out = append(out, hookSnippet{path + " codex", "codex", g.Matcher, h.Command})
				}
			}
		}
	}
	return out
}

// Every hook snippet of the docs, run as written (after `toolwarden tools
// sync` filled the catalog), lets a read through without asking and stops
// a write; its matcher takes the agent's MCP tools and, where the agent
// cannot ask, none of the agent's own tools (which have no annotations).
func TestTheDocsHookSnippetsDecideReadsWithoutAsking(t *testing.T) {
	t.Parallel()
	snippets := docSnippets(t)
	seen := map[string]bool{}
	for _, s := range snippets {
		seen[s.agent] = true
	}
	if !seen["claude"] || !seen["gemini"] || !seen["codex"] {
		t.Fatalf("snippets found: %+v", snippets)
	}
	for _, s := range snippets {
		t.Run(s.where, func(t *testing.T) {
			t.Parallel()
			matcher := regexp.MustCompile(s.matcher)
			mcpName := map[string]string{"claude": "mcp__fs__read_text_file", "gemini": "mcp_fs_read_text_file", "codex": "mcp__fs__read_text_file"}[s.agent]
			if !matcher.MatchString(mcpName) {
				t.Errorf("matcher %q misses %s", s.matcher, mcpName)
			}
			if s.agent != "claude" {
				for _, own := range []string{"Bash", "shell", "apply_patch", "run_shell_command", "read_file"} {
					if matcher.MatchString(own) {
						t.Errorf("matcher %q takes the agent's own tool %s, which its hook would deny", s.matcher, own)
					}
				}
			}
			home := t.TempDir()
			if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("model = \"gpt-5-codex\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			args := strings.Fields(strings.ReplaceAll(s.command, "~", home))
			if len(args) < 2 || args[0] != "toolwarden" || args[1] != "hook" {
				t.Fatalf("command %q", s.command)
			}
			h := newHookRun(t)
			h.put(time.Now(), fsReadDef, fsWriteDef)
			args = append(args[1:], "--state-dir", h.state, "--approvals", h.approvals)
			vars := h.env() // the agents' configs name "fs" there (hook_catalog_test.go)
			for tool, want := range map[string]string{"read_text_file": "allow", "write_file": map[string]string{"claude": "ask"}[s.agent]} {
				if want == "" {
					want = "deny"
				}
				code, out, stderr := runCLIEnv(t, vars, agentEvent(s.agent, tool, "s1"), args...)
				if code != exitOK || verdict(t, s.agent, out) != want {
					t.Errorf("%s: exit %d %s %s, want %s", tool, code, out, stderr, want)
				}
			}
		})
	}
}
