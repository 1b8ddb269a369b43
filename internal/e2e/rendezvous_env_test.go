package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// The environments real agents give the MCP servers they start: Codex
// passes a handful of its variables (internal/agents/codex), the
// TypeScript SDK's getDefaultEnvironment six; neither passes
// XDG_RUNTIME_DIR, and only Codex may pass TMPDIR.
var agentEnvironments = map[string][]string{
	"codex":          {"HOME", "PATH", "LANG", "TERM"},
	"codex-tmpdir":   {"HOME", "PATH", "LANG", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR"},
	"typescript-sdk": {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"},
}

// A wrap started with an agent's stripped environment posts its ask where
// the inbox started from a full terminal environment looks. The terminal
// has XDG_RUNTIME_DIR and TMPDIR set; the agents drop one or both.
func TestAWrapStartedByAnAgentPostsWhereTheTerminalsInboxLooks(t *testing.T) {
	// The terminal's environment, for inbox.Dir in this process.
	xdg := filepath.Join(t.TempDir(), "xdg")
	if err := os.Mkdir(xdg, 0o700); err != nil {
		t.Fatal(err)
	}
	terminalTmp := t.TempDir()
	t.Setenv(inbox.EnvRuntimeDir, "")
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	t.Setenv("TMPDIR", terminalTmp)
	t.Setenv("USER", "someone")
	t.Setenv("LOGNAME", "someone")
	t.Setenv("SHELL", "/bin/sh")
	t.Setenv("LANG", "C.UTF-8")
	terminal, err := inbox.Dir()
	if err != nil {
		t.Fatal(err)
	}
	agentTmp := t.TempDir()
	for agent, keep := range agentEnvironments {
		t.Run(agent, func(t *testing.T) {
			home := t.TempDir()
			env := []string{"-i"}
			for _, k := range keep {
				v := os.Getenv(k)
				switch k {
				case "HOME":
					v = home
				case "TMPDIR":
					v = agentTmp // an agent's own temporary folder
				}
				env = append(env, k+"="+v)
			}
			cfg := writeFile(t, "inbox.toml", "approval_channel = \"inbox\"\n")
			args := append(env, append([]string{twBin}, wrapArgs(t, "ts", []string{cfg}, testServer, "-state", t.TempDir())...)...)
			c := startRaw(t, "env", args...)
			c.initialize("")
			what := fmt.Sprintf("rendezvous-%s-%d", agent, time.Now().UnixNano())
			done := make(chan rawMessage, 1)
			go func() {
				done <- c.call("tools/call", map[string]any{"name": "write", "arguments": map[string]any{"what": what}})
			}()
			var mine *inbox.Ask
			eventually(t, 20*time.Second, "the ask in the terminal's inbox "+terminal, func() bool {
				asks, _ := inbox.List(terminal)
				for i := range asks {
					if strings.Contains(asks[i].Arguments, what) {
						mine = &asks[i]
						return true
					}
				}
				return false
			})
			respond(t, terminal, mine.ID, "allow_once")
			got := decodeCall(t, <-done)
			if got.IsError || got.Text != "wrote "+what {
				t.Fatalf("call after the inbox allowed it: %+v", got)
			}
		})
	}
}
