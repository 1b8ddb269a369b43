package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hook"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

func init() {
	register(command{name: "hook", summary: "decide one agent hook event (Claude Code, Gemini CLI, Codex) from stdin", run: runHook})
}

// maxHookEvent bounds what a hook reads from stdin.
const maxHookEvent = 8 << 20

// exitBlock is what every supported agent reads as "block this call": the
// hook fails closed with it whenever it cannot decide.
const exitBlock = 2

// hookFlags are the flags of one hook invocation.
type hookFlags struct {
	configs, reqs   stringList
	agentName       string
	stateDir        string
	toolsFile       string
	catalogDir      func() (string, error)
	approvals       string
	store           string
	auditPath       string
	approvalTimeout time.Duration
	warm            bool
	warmIdle        time.Duration
}

func parseHookFlags(e *env, args []string) (*hookFlags, int, bool) {
	fs := newCmdFlags(e, "hook", "hook [--agent claude|gemini|codex] [--config F]... [flags] < EVENT.json",
		`Reads one hook event (PreToolUse, BeforeTool, PostToolUse...) of the agent from
stdin, decides the MCP tool call in it by the config, and answers the agent as
it expects: allowed, asked or blocked, with the reason. Sessions live in
--state-dir between hook processes; annotations come from the tool catalog
(toolwarden tools sync) or --tools. Whenever it cannot decide, the call is blocked.

With --warm, the first event starts a background process for this exact
command line, directory and environment that keeps the plugins compiled, and
later events are decided by it (docs/hooks.md, "Warm hooks").

Exit: as the agent expects; 2 blocks the call (so bad usage blocks it too).`)
	f := &hookFlags{}
	fs.Var(&f.configs, "config", "config file (repeatable)")
	fs.Var(&f.reqs, "requirements", "requirements file an admin sets (repeatable; with /etc/codex/requirements.toml, /etc/toolwarden/requirements.toml and $TOOLWARDEN_REQUIREMENTS)")
	fs.StringVar(&f.agentName, "agent", "claude", "the agent that runs the hook: claude, gemini or codex")
	fs.StringVar(&f.stateDir, "state-dir", "", "where sessions live between hook processes (default: the user cache dir)")
	fs.StringVar(&f.toolsFile, "tools", "", `tool definitions by server, {"server": [tools/list entries]}, read instead of the tool catalog`)
	f.catalogDir = catalogFlag(fs.FlagSet, e)
	fs.StringVar(&f.approvals, "approvals", "", "the \"always\" approvals file wrap and proxy write, read here (default: "+displayApprovalsPath()+")")
	fs.StringVar(&f.store, "store", "", "keep \"always\" approvals and session state (taint labels among them) in this store, shared with other hooks, wraps and proxies: sqlite:PATH or postgres://USER@HOST/DB (default: $TOOLWARDEN_STORE, else none; not with --approvals)")
	fs.StringVar(&f.auditPath, "audit", "", auditFlagUsage)
	fs.DurationVar(&f.approvalTimeout, "approval-timeout", channel.HookTimeout, "with approval_channel \"inbox\" or \"both\", how long to wait for an answer in the approval inbox (keep it under the agent's hook timeout)")
	fs.BoolVar(&f.warm, "warm", false, "decide in a background process kept warm for this command line (started by the first event; Linux)")
	fs.DurationVar(&f.warmIdle, "warm-idle", defaultWarmIdle, "with --warm, how long the background process waits for the next event before it exits")
	if code, ok := fs.parse(args); !ok {
		return nil, code, false
	}
	if code, ok := fs.noArgs("the event comes on stdin"); !ok {
		return nil, code, false
	}
	return f, 0, true
}

func runHook(e *env, args []string) int {
	f, code, ok := parseHookFlags(e, args)
	if !ok {
		return code
	}
	if f.warm && e.ownProcess {
		return runHookWarm(e, args, f) // hookwarm.go
	}
	return decideHook(e, f)
}

// decideHook decides the event on e.stdin in this process.
func decideHook(e *env, fl *hookFlags) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "toolwarden hook: "+format+" (call blocked)\n", a...)
		return exitBlock
	}
	agent, ev, err := readHookEvent(e, fl)
	if err != nil {
		return fail("%v", err)
	}
	cfg, err := loadConfig(e, fl.configs, fl.reqs)
	if err != nil {
		return fail("%v", err)
	}
	// The one server the agent runs under the event's name, found once:
	// the allow-lists judge it and the catalog is read for it.
	runs := resolveHookServer(e, agent, ev) // hook_target.go
	var allowListNote string
	if ev.Phase != hook.After {
		allowListNote = admitHookServer(e, cfg, agent, ev, runs) // hook_servers.go
	}
	settings, closeAudit, err := hookSettings(e, fl, cfg)
	if err != nil {
		return fail("%v", err)
	}
	defer closeAudit()
	ctx := context.Background()
	if e.ctx != nil {
		ctx = e.ctx
	}
	st, err := localStore(ctx, fl.store, fl.approvals, hookLogger(e)) // localstore.go
	if err != nil {
		return fail("%v", err)
	}
	if st != nil {
		settings = settings.WithStore(st)
	}
	h, err := host.New(ctx, cfg, settings)
	if err != nil {
		closeStore(st)
		return fail("%v", err)
	}
	if e.afterAnswer != nil {
		// A warm process closes the host (its plugin instances) once the
		// hook has its answer.
		e.afterAnswer(func() { h.Close(ctx); closeStore(st) })
	} else {
		defer func() { h.Close(ctx); closeStore(st) }()
	}
	warnHookLoad(e, cfg, h)

	dir, err := hookStateDir(fl.stateDir)
	if err != nil {
		return fail("%v", err)
	}
	sess, lock, err := h.OpenSessionFile(dir, ev.Session)
	if err != nil {
		return fail("session %q: %v", ev.Session, err)
	}
	defer func() {
		if lock != nil {
			lock.Close()
		}
	}()

	def, err := hookDefinition(e, fl.toolsFile, fl.catalogDir, ev, runs)
	if err != nil {
		return fail("%v", err)
	}
	noteDefinition(&def, sess, ev, allowListNote)
	call := host.Call{Session: ev.Session, Server: ev.Server, Tool: def.Tool, Arguments: ev.Input, Context: ev.ServerContext(cfg, e.getenv)}
	if ev.Phase == hook.After {
		// The call already ran and its before-event decided it: observe
		// only, never a second decision (hook_after.go).
		if err := observeHookCall(ctx, e, h, sess, ev, call); err != nil {
			return fail("%v", err)
		}
		if err := lock.Save(sess); err != nil {
			return fail("saving session: %v", err)
		}
		return exitOK
	}
	d := h.Check(ctx, call)
	if err := lock.Save(sess); err != nil {
		return fail("saving session: %v", err)
	}
	if d.Decision == policy.Ask {
		if out, ok := askHook(ctx, e, fl, h, cfg, ev, &d, dir, &lock); ok {
			e.stdout.Write(out.Stdout)
			return out.Exit
		}
	}
	out := hook.RenderEvent(ev, &d, def.Notes...)
	e.stdout.Write(out.Stdout)
	return out.Exit
}

// readHookEvent reads the agent's event from e.stdin, at most maxHookEvent
// bytes.
func readHookEvent(e *env, fl *hookFlags) (hook.Agent, *hook.Event, error) {
	agent, err := hook.ParseAgent(fl.agentName)
	if err != nil {
		return agent, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(e.stdin, maxHookEvent+1))
	if err != nil {
		return agent, nil, fmt.Errorf("reading the event: %v", err)
	}
	if len(data) > maxHookEvent {
		return agent, nil, fmt.Errorf("event larger than %d bytes", maxHookEvent)
	}
	ev, err := hook.ParseWith(agent, data, agentServerNames(e, agent)) // hook_gemini.go
	return agent, ev, err
}

// hookSettings are the host's settings for one hook event; closeAudit
// closes the audit log it opened, if any.
func hookSettings(e *env, fl *hookFlags, cfg *config.Config) (s host.Settings, closeAudit func(), err error) {
	// Plugin log lines go to the hook's stderr, which a warm process
	// hands back to the hook with the answer.
	s = hostDefaults().WithLogger(hookLogger(e))
	if e.pluginRuntime != nil {
		s = s.WithPluginRuntime(e.pluginRuntime) // a warm process's compiled plugins
	}
	if path := hookApprovalsPath(e, fl.approvals); path != "" {
		s = s.WithApprovalsFile(path)
	}
	// The log is on by default (auditlog.go); the default one failing
	// is a warning, the decision does not wait on it.
	f, err := openAuditLog(e, fl.auditPath, cfg, func(msg string) { fmt.Fprintf(e.stderr, "toolwarden hook: warning: %s\n", msg) })
	if err != nil || f == nil {
		return s, func() {}, err
	}
	return s.WithAuditLog(f), func() { f.Close() }, nil
}

// warnHookLoad writes the config's warnings and the plugins that did not
// load to the hook's stderr.
func warnHookLoad(e *env, cfg *config.Config, h *host.Host) {
	for _, w := range cfg.Warnings {
		fmt.Fprintf(e.stderr, "toolwarden hook: %s\n", w.String())
	}
	for _, w := range h.Warnings() {
		// The plugin answers with its on_error verdict; say why.
		fmt.Fprintf(e.stderr, "toolwarden hook: warning: policy plugin did not load: %v (toolwarden validate reports it)\n", w)
	}
}

// hookStateDir is where hook sessions live: --state-dir, else the user's
// cache folder.
func hookStateDir(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no state dir: %v (pass --state-dir)", err)
	}
	return filepath.Join(base, "toolwarden", "sessions"), nil
}

// noteDefinition adopts a listed definition into the session and adds the
// notes the answer carries: the allow-list's, and drift from the pin.
func noteDefinition(def *hook.Definition, sess *host.Session, ev *hook.Event, allowListNote string) {
	if allowListNote != "" {
		def.Notes = append(def.Notes, allowListNote)
	}
	tool := def.Tool
	if def.Listed {
		adoptListed(sess, ev.Server, tool)
	}
	if pinned, ok := sess.Pinned(ev.Server, tool.Name); ok && pinned != tool.HashHex {
		def.Notes = append(def.Notes, "the tool's definition differs from the one this session first saw (drift): its relaxing hints are not believed")
	}
}

// askHook asks a human through the approval channels (internal/hook/
// channels.go); ok is false when none answers for the hook. The session
// lock (*lock) is not held while a human answers in the inbox.
func askHook(ctx context.Context, e *env, fl *hookFlags, h *host.Host, cfg *config.Config, ev *hook.Event, d *host.Decision, dir string, lock **host.SessionLock) (hook.Output, bool) {
	release := func() { (*lock).Close(); *lock = nil }
	reopen := func() (func() error, error) {
		s, l, err := h.OpenSessionFile(dir, ev.Session)
		if err != nil {
			return nil, err
		}
		*lock = l
		return func() error { return l.Save(s) }, nil
	}
	logger := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return hook.Ask(ctx, h, cfg, ev, d, hook.AskOptions{Timeout: fl.approvalTimeout, Log: logger, Release: release, Reopen: reopen, PID: e.askerPID})
}

// hookDefinition finds the tool's definition: in the tools file when one
// is given (an unreadable one blocks the call: it was asked for), else in
// the tool catalog (an unusable one is reported and counts as absent), else
// by name alone, where the spec's pessimistic defaults apply.
func hookDefinition(e *env, toolsFile string, catalogDir func() (string, error), ev *hook.Event, runs hook.Resolution) (hook.Definition, error) {
	if toolsFile != "" {
		t, listed, err := toolsFileTool(toolsFile, ev)
		return hook.Definition{Tool: t, Listed: listed}, err
	}
	dir, err := catalogDir()
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden hook: warning: %v\n", err)
	}
	def := ev.Definition(dir, time.Now(), hookTarget(e, ev, dir, runs)) // hook_target.go
	if def.Warning != nil {
		fmt.Fprintf(e.stderr, "toolwarden hook: warning: %v\n", def.Warning)
	}
	return def, nil
}

// toolsFileTool finds the tool in a --tools file.
func toolsFileTool(path string, ev *hook.Event) (*host.Tool, bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	var byServer map[string][]json.RawMessage
	if err := json.Unmarshal(data, &byServer); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	for _, raw := range byServer[ev.Server] {
		var probe struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &probe) == nil && probe.Name == ev.Tool {
			t, err := host.ParseTool(raw)
			return t, err == nil, err
		}
	}
	return hook.NameOnly(ev.Tool), false, nil
}

// adoptListed lets a listed definition take the place of a pin made while
// the tool was known by name alone: that pin recorded what toolwarden did
// not know, not what the server said, so learning the definition is not
// the server changing it. Any other pin stays, and a different definition
// is drift.
func adoptListed(sess *session.Session, server string, tool *host.Tool) {
	pinned, ok := sess.Pinned(server, tool.Name)
	if ok && pinned != tool.HashHex && pinned == hook.NameOnly(tool.Name).HashHex {
		sess.Repin(server, tool.Name, tool.HashHex)
	}
}

// hookApprovalsPath is the approvals file a hook reads: --approvals, else
// wrap's and proxy's default, so that "always" approvals given through
// them count here too. A hook never adds one (its agent's answer to an
// ask is not seen by toolwarden). Without a user config dir there is none.
func hookApprovalsPath(e *env, flagged string) string {
	if flagged != "" {
		return flagged
	}
	p, err := defaultApprovalsPath()
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden hook: warning: %v; no \"always\" approvals apply\n", err)
		return ""
	}
	return p
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
