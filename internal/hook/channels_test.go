package hook_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hook"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// inboxDir points this process's inbox at a fresh private directory (so
// these tests do not run in parallel).
func inboxDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rv")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv(inbox.EnvRuntimeDir, dir)
	return dir
}

// askSetup is a host under toml and an ask about fs/write_file.
func askSetup(t *testing.T, agent hook.Agent, toml string) (*host.Host, *config.Config, *hook.Event, *host.Decision) {
	t.Helper()
	cfg, err := config.LoadBytes("config.toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(context.Background(), cfg, host.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	ev, err := hook.Parse(agent, []byte(`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"mcp__fs__write_file","tool_input":{"path":"/tmp/a","content":"x"},"mcp_context":{"server_name":"fs","tool_name":"write_file"}}`))
	if err != nil {
		t.Fatal(err)
	}
	d := h.Check(context.Background(), host.Call{Session: "s1", Server: "fs", Tool: hook.NameOnly("write_file"), Arguments: ev.Input})
	if d.Decision != policy.Ask {
		t.Fatalf("decision %v, want an ask", d.Decision)
	}
	return h, cfg, ev, &d
}

// verdict reads a rendered answer: the verdict and reason the agent sees.
func verdict(t *testing.T, agent hook.Agent, out hook.Output) (string, string) {
	t.Helper()
	if agent == hook.Codex && len(out.Stdout) == 0 {
		return "allow", ""
	}
	var v struct {
		Decision, Reason   string
		HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string }
	}
	if err := json.Unmarshal(out.Stdout, &v); err != nil {
		t.Fatalf("%s", out.Stdout)
	}
	if agent == hook.Gemini {
		return v.Decision, v.Reason
	}
	return v.HookSpecificOutput.PermissionDecision, v.HookSpecificOutput.PermissionDecisionReason
}

// respondWhenPosted answers the one ask the inbox in dir will hold.
func respondWhenPosted(t *testing.T, dir, option string) {
	go func() {
		for i := 0; i < 4000; i++ {
			if asks, _ := inbox.List(dir); len(asks) == 1 {
				if err := inbox.Respond(dir, asks[0].ID, option, "inbox"); err != nil {
					t.Error(err)
				}
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Error("no ask was posted")
	}()
}

func TestAHookAskWaitsForTheInboxAndAnswersTheAgent(t *testing.T) {
	cases := []struct {
		agent  hook.Agent
		option string
		want   string
		saying string
	}{
		{hook.Claude, "allow_once", "allow", "approved in the approval inbox (allow_once) [approved_in_inbox]"},
		{hook.Claude, "deny", "deny", "the user denied this call in the approval inbox [denied_in_inbox]"},
		{hook.Gemini, "allow_once", "allow", "[approved_in_inbox]"},
		{hook.Codex, "allow_once", "allow", ""},
		{hook.Codex, "deny", "deny", "[denied_in_inbox]"},
	}
	for _, c := range cases {
		t.Run(string(c.agent)+" "+c.option, func(t *testing.T) {
			dir := inboxDir(t)
			h, cfg, ev, d := askSetup(t, c.agent, "approval_channel = \"inbox\"\n")
			released, reopened := false, false
			respondWhenPosted(t, dir, c.option)
			out, ok := hook.Ask(context.Background(), h, cfg, ev, d, hook.AskOptions{
				Timeout: time.Hour,
				Release: func() { released = true },
				Reopen: func() (func() error, error) {
					reopened = true
					return func() error { return nil }, nil
				},
			})
			if !ok {
				t.Fatal("the inbox channel was not used")
			}
			got, reason := verdict(t, c.agent, out)
			if got != c.want || !strings.Contains(reason, c.saying) {
				t.Fatalf("verdict %s (%s), want %s saying %q", got, reason, c.want, c.saying)
			}
			if !released {
				t.Error("the session lock was held while waiting")
			}
			if reopened != (c.want == "allow") {
				t.Errorf("reopened %v for %s", reopened, c.want)
			}
			if asks, _ := inbox.List(dir); len(asks) != 0 {
				t.Errorf("still pending: %v", asks)
			}
		})
	}
}

func TestAnInboxAllowForTheSessionIsRemembered(t *testing.T) {
	dir := inboxDir(t)
	h, cfg, ev, d := askSetup(t, hook.Claude, "[apps._default]\napproval_channel = \"both\"\n")
	if !d.Rememberable {
		t.Skip("the ask is not rememberable")
	}
	respondWhenPosted(t, dir, "allow_session")
	out, ok := hook.Ask(context.Background(), h, cfg, ev, d, hook.AskOptions{Timeout: time.Hour})
	if got, _ := verdict(t, hook.Claude, out); !ok || got != "allow" {
		t.Fatalf("%s", out.Stdout)
	}
	if again := h.Check(context.Background(), host.Call{Session: "s1", Server: "fs", Tool: hook.NameOnly("write_file"), Arguments: ev.Input}); again.Decision != policy.Allow {
		t.Errorf("the next call: %v, want it allowed for the session", again.Decision)
	}
}

func TestAHookAskThatCannotBeAnsweredBlocksWithTheReason(t *testing.T) {
	t.Run("none", func(t *testing.T) {
		dir := inboxDir(t)
		h, cfg, ev, d := askSetup(t, hook.Claude, "[mcp_servers.fs]\ncommand = \"fs\"\napproval_channel = \"none\"\n")
		out, ok := hook.Ask(context.Background(), h, cfg, ev, d, hook.AskOptions{Release: func() { t.Error("released for none") }})
		got, reason := verdict(t, hook.Claude, out)
		if !ok || got != "deny" || !strings.Contains(reason, `mcp_servers.fs.approval_channel = "none" at config.toml:3:1`) || !strings.Contains(reason, "[no_approval_channel]") {
			t.Fatalf("%v %s: %s", ok, got, reason)
		}
		if asks, _ := inbox.List(dir); len(asks) != 0 {
			t.Errorf("posted %v", asks)
		}
	})
	t.Run("no answer in time", func(t *testing.T) {
		inboxDir(t)
		h, cfg, ev, d := askSetup(t, hook.Gemini, "approval_channel = \"inbox\"\n")
		out, ok := hook.Ask(context.Background(), h, cfg, ev, d, hook.AskOptions{Timeout: 50 * time.Millisecond})
		got, reason := verdict(t, hook.Gemini, out)
		if !ok || got != "deny" || !strings.Contains(reason, "nobody answered in the approval inbox within 50ms") {
			t.Fatalf("%v %s: %s", ok, got, reason)
		}
	})
	t.Run("an allow that cannot be recorded blocks", func(t *testing.T) {
		dir := inboxDir(t)
		h, cfg, ev, d := askSetup(t, hook.Claude, "approval_channel = \"inbox\"\n")
		respondWhenPosted(t, dir, "allow_once")
		out, _ := hook.Ask(context.Background(), h, cfg, ev, d, hook.AskOptions{Timeout: time.Hour,
			Reopen: func() (func() error, error) { return nil, os.ErrPermission }})
		if got, reason := verdict(t, hook.Claude, out); got != "deny" || !strings.Contains(reason, "could not be recorded") {
			t.Fatalf("%s: %s", got, reason)
		}
	})
	t.Run("elicitation is left to the agent", func(t *testing.T) {
		h, cfg, ev, d := askSetup(t, hook.Claude, "")
		if _, ok := hook.Ask(context.Background(), h, cfg, ev, d, hook.AskOptions{}); ok {
			t.Fatal("elicitation was settled by the hook")
		}
	})
}
