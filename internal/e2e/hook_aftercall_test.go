package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// afterEvent is the payload each agent sends once an MCP tool of server
// "fs" has run (Claude Code's and Codex's PostToolUse, Gemini CLI's
// AfterTool), in the shapes the agents' sources give them.
func afterEvent(agent, session, tool string, input map[string]any, failed bool) string {
	in, _ := json.Marshal(input)
	if failed {
		switch agent {
		case "gemini":
			return `{"session_id":"` + session + `","transcript_path":"/tmp/gemini-chat.json","cwd":"/tmp","hook_event_name":"AfterTool","timestamp":"2026-11-26T09:00:01.000Z","tool_name":"mcp_fs_` + tool + `","tool_input":` + string(in) + `,"tool_response":{"llmContent":"ENOENT","returnDisplay":"ENOENT","error":{"message":"ENOENT","type":"execution_failed"}},"mcp_context":{"server_name":"fs","tool_name":"` + tool + `"}}`
		case "codex":
			return `{"session_id":"` + session + `","turn_id":"turn-1","transcript_path":"/tmp/rollout.jsonl","cwd":"/tmp","hook_event_name":"PostToolUse","model":"gpt-5-codex","permission_mode":"default","tool_name":"mcp__fs__` + tool + `","tool_input":` + string(in) + `,"tool_response":{"content":[{"type":"text","text":"ENOENT"}],"isError":true},"tool_use_id":"call_2"}`
		}
		return `{"session_id":"` + session + `","transcript_path":"/tmp/claude.jsonl","cwd":"/tmp","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"mcp__fs__` + tool + `","tool_input":` + string(in) + `,"tool_response":{"content":[{"type":"text","text":"ENOENT"}],"isError":true},"tool_use_id":"toolu_2"}`
	}
	switch agent {
	case "gemini":
		return `{"session_id":"` + session + `","transcript_path":"/tmp/gemini-chat.json","cwd":"/tmp","hook_event_name":"AfterTool","timestamp":"2026-11-26T09:00:01.000Z","tool_name":"mcp_fs_` + tool + `","tool_input":` + string(in) + `,"tool_response":{"llmContent":[{"text":"hello"}],"returnDisplay":"hello"},"mcp_context":{"server_name":"fs","tool_name":"` + tool + `","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/tmp"]}}`
	case "codex":
		return `{"session_id":"` + session + `","turn_id":"turn-1","transcript_path":"/tmp/rollout.jsonl","cwd":"/tmp","hook_event_name":"PostToolUse","model":"gpt-5-codex","permission_mode":"default","tool_name":"mcp__fs__` + tool + `","tool_input":` + string(in) + `,"tool_response":{"content":[{"type":"text","text":"hello"}],"isError":false},"tool_use_id":"call_1"}`
	}
	return `{"session_id":"` + session + `","transcript_path":"/tmp/claude.jsonl","cwd":"/tmp","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"mcp__fs__` + tool + `","tool_input":` + string(in) + `,"tool_response":[{"type":"text","text":"hello"}],"tool_use_id":"toolu_1"}`
}

// One tool call through an agent's hooks is one decision: the before-event
// decides it (one "check" audit record, the session's call count and the
// counter plugin's check-time state each advance by one) and the
// after-event only observes it (one "observe" record; the plugin's observe
// counter advances by one). Two calls through the real binary, for each
// agent, must read 2 everywhere; a hook that decided the after-event again
// reads 4 checks and a call count of 4.
func TestHookAfterEventObservesTheCallWithoutDecidingItAgain(t *testing.T) {
	t.Parallel()
	for _, agent := range []string{"claude", "gemini", "codex"} {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			audit := filepath.Join(dir, "audit.jsonl")
			state := filepath.Join(dir, "sessions")
			tools := writeFile(t, "tools.json", `{"fs":[{"name":"read_text_file","description":"read a file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}]}`)
			cfg := writeFile(t, "counter.toml", fmt.Sprintf("[policies.counter]\nwasm = %q\n", filepath.Join(root, "internal", "e2e", "testdata", "counter.wasm")))
			run := func(event string) string {
				cmd := exec.Command(twBin, "hook", "--agent", agent, "--config", cfg, "--tools", tools,
					"--state-dir", state, "--audit", audit, "--approvals", filepath.Join(dir, "approvals.json"))
				cmd.Env = append(os.Environ(), "TOOLWARDEN_CATALOG=off")
				cmd.Stdin = strings.NewReader(event)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				if err := cmd.Run(); err != nil {
					t.Fatalf("hook --agent %s: %v\n%s\n%s", agent, err, out.String(), errb.String())
				}
				return out.String()
			}
			const calls = 2
			for i := range calls {
				input := map[string]any{"path": fmt.Sprintf("/tmp/f%d.txt", i)}
				before := run(hookEvent(agent, "s1", "read_text_file", "/tmp", input))
				if agent != "codex" && !strings.Contains(before, "allow") {
					t.Fatalf("call %d: before-event answered %q, want an allow", i, before)
				}
				// The second call fails: its observe record says so.
				if after := run(afterEvent(agent, "s1", "read_text_file", input, i == 1)); after != "" {
					t.Fatalf("call %d: after-event printed %q, want nothing (it decides nothing)", i, after)
				}
			}

			events, outcomes := auditEvents(t, audit)
			if events["check"] != calls || events["observe"] != calls {
				t.Fatalf("audit log holds %v, want %d check and %d observe records", events, calls, calls)
			}
			if len(outcomes) != 2 || outcomes[0] || !outcomes[1] {
				t.Errorf("observe records' is_error %v, want [false true]", outcomes)
			}
			st := sessionFile(t, filepath.Join(state, "s1.json"))
			if st.Counters.Calls != calls {
				t.Errorf("session call count %d, want %d", st.Counters.Calls, calls)
			}
			c := st.Plugins["counter"].Counters
			if c["checks"] != calls || c["observes"] != calls {
				t.Errorf("counter plugin's state %v, want checks=%d observes=%d", c, calls, calls)
			}
		})
	}
}

// auditEvents counts the audit log's records by event, and lists the
// observe records' is_error in order.
func auditEvents(t *testing.T, path string) (map[string]int, []bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := map[string]int{}
	var outcomes []bool
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Event    string `json:"event"`
			Decision struct {
				IsError bool `json:"is_error"`
			} `json:"decision"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit record %q: %v", sc.Text(), err)
		}
		n[r.Event]++
		if r.Event == "observe" {
			outcomes = append(outcomes, r.Decision.IsError)
		}
	}
	return n, outcomes
}

type sessionState struct {
	Counters struct {
		Calls int64 `json:"calls"`
	} `json:"counters"`
	Plugins map[string]struct {
		Counters map[string]int64 `json:"counters"`
	} `json:"plugins"`
}

func sessionFile(t *testing.T, path string) sessionState {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st sessionState
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return st
}
