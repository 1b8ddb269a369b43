package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/sdk/hook"
)

func init() {
	register(command{name: "hook", summary: "decide one agent hook event (Claude Code, Gemini CLI, Codex) from stdin", run: runHook})
}

// maxHookEvent bounds what a hook reads from stdin.
const maxHookEvent = 8 << 20

// exitBlock is what every supported agent reads as "block this call": the
// hook fails closed with it whenever it cannot decide.
const exitBlock = 2

func runHook(e *env, args []string) int {
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var configs stringList
	fs.Var(&configs, "config", "config file (repeatable)")
	agentName := fs.String("agent", "claude", "the agent that runs the hook: claude, gemini or codex")
	stateDir := fs.String("state-dir", "", "where sessions live between hook processes (default: the user cache dir)")
	toolsFile := fs.String("tools", "", `tool definitions by server, {"server": [tools/list entries]}, so annotations count in hook mode`)
	auditPath := fs.String("audit", "", "append a JSON Lines record per decision to this file")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "toolwarden hook: "+format+" (call blocked)\n", a...)
		return exitBlock
	}
	agent, err := hook.ParseAgent(*agentName)
	if err != nil {
		return fail("%v", err)
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, maxHookEvent+1))
	if err != nil {
		return fail("reading the event: %v", err)
	}
	if len(data) > maxHookEvent {
		return fail("event larger than %d bytes", maxHookEvent)
	}
	ev, err := hook.Parse(agent, data)
	if err != nil {
		return fail("%v", err)
	}
	cfg, err := loadConfig(configs)
	if err != nil {
		return fail("%v", err)
	}
	settings := host.Defaults()
	if *auditPath != "" {
		f, err := os.OpenFile(*auditPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fail("%v", err)
		}
		defer f.Close()
		settings = settings.WithAuditLog(f)
	}
	ctx := context.Background()
	h, err := host.New(ctx, cfg, settings)
	if err != nil {
		return fail("%v", err)
	}
	defer h.Close(ctx)

	dir := *stateDir
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return fail("no state dir: %v (pass --state-dir)", err)
		}
		dir = filepath.Join(base, "toolwarden", "sessions")
	}
	sess, lock, err := h.OpenSessionFile(dir, ev.Session)
	if err != nil {
		return fail("session %q: %v", ev.Session, err)
	}
	defer lock.Close()

	tool, err := hookTool(*toolsFile, ev)
	if err != nil {
		return fail("%v", err)
	}
	call := host.Call{Session: ev.Session, Server: ev.Server, Tool: tool, Arguments: ev.Input, Context: ev.ServerContext(cfg, e.getenv)}
	d := h.Check(ctx, call)
	if ev.Phase == hook.After {
		// The call already ran: its decision only supplies the hints and
		// identity that observe plugins see.
		h.Observe(ctx, call, &d, host.Result{Text: responseText(ev.Response)})
		if err := lock.Save(sess); err != nil {
			return fail("saving session: %v", err)
		}
		return exitOK
	}
	if err := lock.Save(sess); err != nil {
		return fail("saving session: %v", err)
	}
	out := hook.Render(agent, &d, ev.Input)
	e.stdout.Write(out.Stdout)
	return out.Exit
}

// hookTool finds the tool's definition in the tools file, or makes a
// name-only one: without annotations the spec's pessimistic defaults apply.
func hookTool(path string, ev *hook.Event) (*host.Tool, error) {
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var byServer map[string][]json.RawMessage
		if err := json.Unmarshal(data, &byServer); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, raw := range byServer[ev.Server] {
			var probe struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(raw, &probe) == nil && probe.Name == ev.Tool {
				return host.ParseTool(raw)
			}
		}
	}
	raw, _ := json.Marshal(map[string]string{"name": ev.Tool})
	return host.ParseTool(raw)
}

// responseText flattens a tool response for observe: a JSON string as its
// text, anything else as its JSON.
func responseText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
