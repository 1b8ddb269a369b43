package codex

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// wrapServer is Codex's [mcp_servers.fs] running the filesystem server
// behind `toolwarden wrap` with the given toolwarden configs.
//
// required = true makes Codex wait for the server before its first model
// request (an optional server may still be starting, and its tools would
// be missing from the first request). default_tools_approval_mode =
// "approve" turns off Codex's own gate: Codex asks about an MCP tool whose
// annotations say destructive, and under approval_policy = "never" refuses
// it itself, so toolwarden would never see the call it is meant to decide.
func (a *agent) wrapServer(configs ...string) string {
	args := []string{"wrap", "--app", "fs"}
	for _, c := range configs {
		args = append(args, "--config", c)
	}
	args = append(args, "--", a.fsServer, a.served)
	return fmt.Sprintf(`[mcp_servers.fs]
command = "toolwarden"
args = %s
required = true
default_tools_approval_mode = "approve"
`, tomlList(args))
}

func tomlList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// noOneSaw matches an ask answered without a human: the model must learn
// that nobody was shown the prompt, not that someone refused. The suite's
// three agents accept the same phrasings.
var noOneSaw = regexp.MustCompile(`(?i)no one saw|nobody saw|no one was asked|cannot show approval prompts|cannot ask for`)

func TestCodexThroughWrap(t *testing.T) {
	a := newAgent(t)
	token := "token-7f3a9c1e"
	a.WriteServed("notes.txt", "the meeting is at noon, "+token)
	leak, asked := a.Served("secret/leak.txt"), a.Served("asked")
	a.model.Script(
		step{Tool: "mcp__fs__read_text_file", Args: map[string]any{"path": a.Served("notes.txt")}},
		step{Tool: "mcp__fs__write_file", Args: map[string]any{"path": leak, "content": "exfiltrated"}},
		step{Tool: "mcp__fs__create_directory", Args: map[string]any{"path": asked}},
		step{Text: "done"},
	)
	a.WriteConfig(a.wrapServer(a.policyConfig()))
	r := a.Exec("Read notes.txt, save a copy under secret/, and make a folder.")
	if r.Err != nil {
		t.Fatalf("codex exec: %v", r.Err)
	}
	a.Offline()
	reqs := a.model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the model got %d requests, want 4 (one per scripted step)", len(reqs))
	}

	t.Run("Codex offers the server's tools in the namespace mcp__fs", func(t *testing.T) {
		// What 0.171 sends; the hook still sees mcp__fs__<tool>.
		if !slices.Contains(reqs[0].Namespaces, "mcp__fs") || slices.Contains(reqs[0].Tools, "read_text_file") {
			t.Errorf("the first request offers namespaces %v and tools %v, want the fs tools inside namespace mcp__fs", reqs[0].Namespaces, reqs[0].Tools)
		}
	})

	t.Run("a hidden tool is not offered to the model", func(t *testing.T) {
		for i, req := range reqs {
			if slices.Contains(req.Tools, "mcp__fs__move_file") {
				t.Errorf("request %d offers mcp__fs__move_file, hidden by [apps.fs.tools.move_file] enabled = false: %v", i, req.Tools)
			}
			for _, want := range []string{"mcp__fs__read_text_file", "mcp__fs__write_file"} {
				if !slices.Contains(req.Tools, want) {
					t.Errorf("request %d does not offer %s: %v", i, want, req.Tools)
				}
			}
		}
	})

	t.Run("an allowed call's result reaches the model", func(t *testing.T) {
		out, ok := a.model.ResultFor(0)
		if !ok || !strings.Contains(out, token) {
			t.Errorf("the read's result (received: %v) does not carry %q:\n%s", ok, token, out)
		}
	})

	t.Run("a denied call does not run and the model is told why and how to allow it", func(t *testing.T) {
		if exists(leak) {
			t.Errorf("%s was written: the denied call ran", leak)
		}
		out, _ := a.model.ResultFor(1)
		for _, want := range []string{"toolwarden denied", secretReason, "argguard"} {
			if !strings.Contains(out, want) {
				t.Errorf("the deny the model received does not name the reason (%q):\n%s", want, out)
			}
		}
		if !strings.Contains(strings.ToLower(out), "to allow") {
			t.Errorf("the deny the model received does not say how to allow the call:\n%s", out)
		}
	})

	t.Run("an asked call does not run and the model learns no one saw the prompt", func(t *testing.T) {
		if exists(asked) {
			t.Errorf("%s was created: the asked call ran without an answer", asked)
		}
		out, _ := a.model.ResultFor(2)
		if strings.Contains(out, "user denied") {
			t.Errorf("codex exec declines every elicitation itself, yet the model was told the user denied the call:\n%s", out)
		}
		if !noOneSaw.MatchString(out) {
			t.Errorf("the model was not told that no one saw the prompt:\n%s", out)
		}
		if !strings.Contains(strings.ToLower(out), "to allow") || !strings.Contains(out, "approval_mode") {
			t.Errorf("the model was not told how to allow the call:\n%s", out)
		}
	})
}

// A Codex user's own [apps.fs] destructive_enabled = false means nothing to
// Codex for a plain MCP server (Codex gates only its ChatGPT connectors by
// [apps]), but wrap, given that same config.toml, hides the destructive
// tools from the model.
func TestCodexThroughWrapHidesDestructiveToolsByTheUsersCodexConfig(t *testing.T) {
	a := newAgent(t, step{Text: "nothing to do"})
	a.WriteConfig(a.wrapServer(a.ConfigPath()) + `
[apps.fs]
destructive_enabled = false
`)
	r := a.Exec("List what you can do.")
	if r.Err != nil {
		t.Fatalf("codex exec: %v", r.Err)
	}
	a.Offline()
	reqs := a.model.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model got no request")
	}
	tools := reqs[0].Tools
	if !slices.Contains(tools, "mcp__fs__read_text_file") {
		t.Fatalf("the filesystem server's tools are not offered at all: %v", tools)
	}
	for _, hidden := range []string{"mcp__fs__write_file", "mcp__fs__edit_file", "mcp__fs__move_file"} {
		if slices.Contains(tools, hidden) {
			t.Errorf("%s is offered to the model, though the Codex config wrap reads says destructive_enabled = false", hidden)
		}
	}
}
