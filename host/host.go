package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// Decision is the answer for one call. Decision (the field) is the Verdict;
// Reasons say why, Trace lists each step of the pipeline, Prompt is set for
// an ask, Hidden for a tool the session may not see, and Rememberable when
// an "allow for this session" or "always" answer may be kept. Pass the
// Decision back, unchanged, to Approve and Observe.
type Decision = policy.Decision

// Tool is a parsed MCP tool definition: its name, its annotations (hints,
// untrusted claims until the server is trusted) and the hash the session
// pins it by.
type Tool = hints.Tool

// ParseTool parses one tool definition as listed by tools/list. Parse each
// tool once, when the list is read; Check reuses its hash and hints.
func ParseTool(raw []byte) (*Tool, error) { return hints.ParseTool(raw) }

// Verdicts, re-exported for callers of the front door.
const (
	Allow = policy.Allow
	Ask   = policy.Ask
	Deny  = policy.Deny
)

// Call is one tool call to decide.
type Call struct {
	// Session is the conversation the call belongs to.
	Session string
	// Server is the [mcp_servers.<name>] key (or the app name given to wrap).
	Server string
	Tool   *Tool
	// Arguments is the call's arguments object as raw JSON.
	Arguments json.RawMessage
	// Context is what is known of the server's working directory, home
	// and roots, against which path arguments are resolved; nil when
	// nothing is (path rules then fail closed on relative paths).
	Context *ServerContext
}

// Result is what Observe sees of a tool's result.
type Result struct {
	// Text is the result's text content. Observe truncates it to the
	// configured bound before any plugin sees it.
	Text    string
	IsError bool
}

// Scope is how long an approval lasts.
type Scope uint8

const (
	// Once approves this call only.
	Once Scope = iota
	// ForSession remembers the approval for the rest of the session.
	ForSession
	// Always remembers it in the persistent approvals file.
	Always
	// ForSessionScoped remembers it for the rest of the session, for calls
	// inside the scopes the decision offers (Decision.Scopes) only.
	ForSessionScoped
)

func (s Scope) String() string {
	switch s {
	case ForSession:
		return "session"
	case Always:
		return "always"
	case ForSessionScoped:
		return "session_scoped"
	}
	return "once"
}

// ParseScope reads "once", "session", "session_scoped" or "always".
func ParseScope(s string) (Scope, error) {
	switch s {
	case "once":
		return Once, nil
	case "session":
		return ForSession, nil
	case "always":
		return Always, nil
	case "session_scoped":
		return ForSessionScoped, nil
	}
	return Once, fmt.Errorf("unknown approval scope %q (want once, session, session_scoped or always)", s)
}

// Errors returned by Approve.
var (
	ErrNotAsked        = errors.New("decision is not an ask: there is nothing to approve")
	ErrNotRememberable = errors.New("this ask cannot be remembered (approval mode prompt or writes, or a plugin said so): approve it once")
	ErrNotScoped       = errors.New("this ask offers no scope to remember it for: approve it once")
	ErrNoApprovalsFile = errors.New("no approvals file configured: \"always\" is unavailable")
)

// Host decides tool calls. Create one with New; it is safe for concurrent use.
//
// What it decides by (config, rules, plugins) is one generation, which
// Reload replaces at run time; what it remembers (sessions, approvals) is
// its own and outlives every generation.
type Host struct {
	reloadState
	sessions  *session.Store
	always    *session.Persistent
	audit     *audit.Log
	maxResult int
	now       func() time.Time
	observing observeGates // observations running after the answer (observe_after.go)
	callers   callers      // who makes each session's calls (caller.go)
	shared    sharing      // the store shared with other processes, if any (store.go)
}

// New builds a host for cfg. Plugins configured under [policies.*] are
// compiled and instantiated here, so New can take a while on a cold cache.
func New(ctx context.Context, cfg *Config, s Settings) (*Host, error) {
	h := &Host{maxResult: s.maxResult, now: time.Now}
	h.settings = s
	if s.audit != nil || s.auditSink != nil {
		h.audit = audit.NewTee(s.audit, s.auditSink)
	}
	if s.approvalsFile != "" {
		p, err := session.OpenPersistent(s.approvalsFile)
		if err != nil {
			return nil, err
		}
		h.always = p
	}
	if s.store != nil {
		// The store's grants, not the file's, are the "always" approvals
		// decisions see (store.go); the file stays for Approvals.
		h.shared.init(s.store, s.logger)
		h.sessions = session.NewStore(nil)
	} else {
		h.sessions = session.NewStore(h.always)
	}
	g, err := h.build(ctx, cfg, false)
	if err != nil {
		return nil, err
	}
	h.gen.Store(g)
	return h, nil
}

// Plugin is a Go-native plugin, added with Settings.WithPlugin: it has a
// name and implements one or more of Checker (the check event), Observer
// (observe) and Lister (list).
type Plugin interface {
	Name() string
}

func (g *generation) addPlugin(p Plugin) bool {
	c, isChecker := p.(policy.Checker)
	if isChecker {
		g.checkers = append(g.checkers, c)
	}
	o, isObserver := p.(policy.Observer)
	if isObserver {
		g.observers = append(g.observers, o)
	}
	l, isLister := p.(policy.Lister)
	if isLister {
		g.listers = append(g.listers, l)
	}
	return isChecker || isObserver || isLister
}

// Config is the configuration the host decides by now: the one it was
// built from, or the last one Reload applied.
func (h *Host) Config() *Config { return h.gen.Load().cfg }

// Session returns the session with id, creating it on first use.
func (h *Host) Session(id string) *Session {
	h.observing.settle(id)
	return h.sessions.Get(id)
}

// LookupSession returns the session with id if the host holds it, without
// creating it.
func (h *Host) LookupSession(id string) (*Session, bool) {
	h.observing.settle(id)
	return h.sessions.Lookup(id)
}

// OpenSessionFile loads session id from its file under dir (hook mode: one
// process per call, so a session lives in a file between them) and locks
// it until the lock is closed; the lock's Save writes the session back.
func (h *Host) OpenSessionFile(dir, id string) (*Session, *SessionLock, error) {
	return h.sessions.OpenFile(dir, id)
}

// EndSession forgets a session and everything it remembered.
func (h *Host) EndSession(id string) {
	h.sessions.End(id)
	h.shared.sessions.Delete(id)
	h.gen.Load().lists.forget(id)
	h.callers.m.Delete(id)
}

// Approvals is the persistent approvals file, or nil.
func (h *Host) Approvals() *Approvals { return h.always }

// Identity returns the app (and connector) a tool of server belongs to.
func (h *Host) Identity(server string, tool *Tool) (app, connector string) {
	return h.gen.Load().rules.Identity(server, tool)
}

// Check decides one call, wholly by the policy current when it starts.
func (h *Host) Check(ctx context.Context, c Call) Decision {
	u := h.acquire()
	defer u.release()
	return h.check(ctx, u.g, c)
}

func (h *Host) check(ctx context.Context, g *generation, c Call) Decision {
	h.observing.settle(c.Session)
	s := h.sessions.Get(c.Session)
	if h.shared.st != nil {
		return h.checkShared(ctx, g, c, s) // store.go
	}
	d, added := h.decideIn(ctx, g, c, s, sessionApprovals{s})
	h.recordCheck(ctx, c, s, &d, added)
	return d
}

// decideIn decides c in session s, whose approvals step 6 reads through
// a, and adds the labels the decision asks for.
func (h *Host) decideIn(ctx context.Context, g *generation, c Call, s *session.Session, a policy.Approvals) (d Decision, added []string) {
	drifted := s.Pin(c.Server, c.Tool.Name, c.Tool.HashHex)
	in := policy.Input{
		Session:   c.Session,
		Server:    c.Server,
		Tool:      c.Tool,
		Arguments: c.Arguments,
		Labels:    s.Labels(),
		Drifted:   drifted,
		Approvals: a,
		Plugins:   g.checkers,
		Context:   c.Context,
		State:     s,
		NoTrace:   h.settings.noTrace,
		Caller:    h.callerOf(c.Session),
	}
	d = g.decide(ctx, &in)
	if len(d.Labels) > 0 {
		added = s.AddLabels(d.Labels...)
	}
	return d, added
}

// recordCheck counts a decision in its session and writes its audit
// record.
func (h *Host) recordCheck(ctx context.Context, c Call, s *session.Session, d *Decision, added []string) {
	s.Count(d.Decision == policy.Ask, d.Decision == policy.Deny)
	if h.audit != nil {
		h.audit.WriteContext(ctx, audit.Record{Time: h.now(), Event: "check", Session: c.Session, Decision: d, Labels: added})
	}
}

// Visible reports whether the visibility gate (step 3) lets a tool into
// tools/list for a session. It does not run plugins' list event: Filter
// does, and Check applies both to every call.
func (h *Host) Visible(sessionID, server string, tool *Tool) (bool, Reason) {
	return h.visible(h.gen.Load(), sessionID, server, tool)
}

func (h *Host) visible(g *generation, sessionID, server string, tool *Tool) (bool, policy.Reason) {
	s := h.sessions.Get(sessionID)
	drifted := false
	if pinned, ok := s.Pinned(server, tool.Name); ok && pinned != tool.HashHex {
		drifted = true
	}
	return g.rules.VisibleTo(server, tool, drifted, h.callerOf(sessionID))
}

// Filter returns the tools of server that a session may see, in order:
// the visibility gate first, then every plugin's list event (once per app
// of the server). A list plugin that fails applies its on_error: deny
// (the default) hides every tool it could have hidden. A call to a tool
// Filter would leave out is denied by Check, whether or not Filter ran.
func (h *Host) Filter(ctx context.Context, sessionID, server string, tools []*Tool) []*Tool {
	u := h.acquire()
	defer u.release()
	g := u.g
	if h.shared.st != nil {
		h.loadForList(ctx, sessionID) // store.go
	}
	if len(g.listers) > 0 {
		h.observing.settle(sessionID) // list plugins read the labels
		return g.filterListed(ctx, h.sessions.Get(sessionID), h.callerOf(sessionID), server, tools)
	}
	out := make([]*Tool, 0, len(tools))
	for _, t := range tools {
		if ok, _ := h.visible(g, sessionID, server, t); ok {
			out = append(out, t)
		}
	}
	return out
}

// Observes reports whether Observe does anything: an observer plugin is
// configured, or an audit log records observations. When it is false,
// Observe changes nothing and a caller may skip it (and reading the result
// it would pass).
func (h *Host) Observes() bool { return len(h.gen.Load().observers) > 0 || h.audit != nil }

// ObservesCall is Observes for one decided call: it is false when Observe
// of this call would change nothing, because no observer plugin matches
// the call's app (or server, for a connector) and tool and no audit log
// records observations. A caller may then skip Observe and reading the
// result. A plugin's observe is never skipped for what it would return:
// only the plugin knows which labels and state its observe can change
// (docs/RATIONALE.md, "Observe is skipped only where no plugin matches").
func (h *Host) ObservesCall(d *Decision) bool {
	return h.audit != nil || anyObserves(h.gen.Load().observers, d)
}

// anyObserves reports whether an observer matches the decided call, by the
// rule Observe runs them by.
func anyObserves(observers []policy.Observer, d *Decision) bool {
	for _, o := range observers {
		if observes(o, d) {
			return true
		}
	}
	return false
}

func observes(o policy.Observer, d *Decision) bool {
	return o.Matches(d.App, d.Tool) || d.Connector != "" && o.Matches(d.Server, d.Tool)
}

// Observe runs after a tool ran: plugins see the call and a bounded summary
// of the result and may add session labels. It returns the labels added.
func (h *Host) Observe(ctx context.Context, c Call, d *Decision, r Result) []string {
	u := h.acquire()
	defer u.release()
	h.observing.settle(c.Session)
	return h.observe(ctx, u.g, c, d, r)
}

func (h *Host) observe(ctx context.Context, g *generation, c Call, d *Decision, r Result) []string {
	if h.audit == nil && !anyObserves(g.observers, d) {
		return nil // nothing would run and nothing is recorded
	}
	s := h.sessions.Get(c.Session)
	text := r.Text
	if len(text) > h.maxResult {
		text = text[:h.maxResult]
	}
	full := ""
	if n := g.resultLimit; n > h.maxResult && len(r.Text) > h.maxResult {
		full = r.Text[:min(n, len(r.Text))]
	}
	in := policy.ObserveInput{
		Session: c.Session, Labels: s.Labels(), Server: c.Server, App: d.App, Connector: d.Connector,
		Tool: c.Tool, Arguments: c.Arguments, Hints: d.Hints, Caps: d.Capabilities,
		Result: text, ResultFull: full, IsError: r.IsError, Context: c.Context, State: s,
	}
	var labels []string
	var states []stateChange
	for _, o := range g.observers {
		if !observes(o, d) {
			continue
		}
		res := o.Observe(ctx, &in)
		labels = append(labels, res.Labels...)
		states = observedState(states, o.Name(), &res)
	}
	added := s.AddLabels(labels...)
	if h.audit != nil {
		h.audit.WriteContext(ctx, audit.Record{Time: h.now(), Event: "observe", Session: c.Session, Decision: observed{Server: c.Server, Tool: c.Tool.Name, IsError: r.IsError, State: states}, Labels: added})
	}
	if h.shared.st != nil {
		// A result must be observed even when the caller gave up on it.
		h.shared.saveLogged(context.WithoutCancel(ctx), s, "observe")
	}
	return added
}

type observed struct {
	Server  string `json:"server"`
	Tool    string `json:"tool"`
	IsError bool   `json:"is_error"`
	// State lists the plugin states this observation changed.
	State []stateChange `json:"state,omitempty"`
}

// Approve records the human's answer to an ask. Where the config names
// approvers for the tool, the session's caller must be one of them, else
// Approve fails with ErrNotApprover and records nothing (a session with no
// caller, as in the local front ends, approves no such ask). Every scope accepts the
// decision's definition as the tool's new pin (after drift); ForSession and
// Always also remember it, which only a rememberable ask allows: ForSession
// in the session, Always in the approvals file only (so that a revoke from
// any process ends it here too). Always fails, and remembers nothing, when
// the file cannot be read (see session.Persistent.Err).
//
// With a shared store (Settings.WithStore), Always is a grant in the store
// instead, covering the calls of the session's caller (its principal), or
// the local front ends' calls only (scope local: no caller of serve) when
// the session has none (a local front end);
// it fails, and remembers nothing, when the store cannot be written.
func (h *Host) Approve(sessionID string, d *Decision, scope Scope) error {
	return h.approve(sessionID, d, scope, nil, session.GrantScope{})
}

// approve is Approve, and ApproveBy when by is set (caller.go).
func (h *Host) approve(sessionID string, d *Decision, scope Scope, by *Caller, grant session.GrantScope) error {
	if d.Decision != policy.Ask {
		return ErrNotAsked
	}
	if err := h.mayApproveAs(sessionID, d, by); err != nil {
		return err // caller.go
	}
	if (scope == ForSession || scope == Always) && !d.Rememberable {
		return ErrNotRememberable
	}
	if scope == ForSessionScoped && len(d.Scopes) == 0 {
		return ErrNotScoped
	}
	if scope == Always && h.always == nil && h.shared.st == nil {
		return ErrNoApprovalsFile
	}
	var granted *session.GrantScope
	if scope == Always && h.shared.st != nil {
		g, err := h.grantScope(sessionID, grant) // store.go
		if err != nil {
			return err
		}
		granted = &g
	} else if grant != (session.GrantScope{}) {
		return fmt.Errorf("a grant scope (%+v) is for an \"always\" approval kept in a shared store; this one is %s without a store", grant, scope)
	}
	s := h.sessions.Get(sessionID)
	key := session.ApprovalKey{App: d.App, Server: d.Server, Connector: d.Connector, Tool: d.Tool, Hash: d.DefinitionHash}
	if granted != nil {
		// The grant first: when the store refuses it, nothing changed.
		if err := h.grantAlways(key, *granted, grantor(by, h.callerOf(sessionID))); err != nil {
			return err
		}
	}
	s.Repin(d.Server, d.Tool, d.DefinitionHash)
	switch {
	case scope == ForSession:
		s.Remember(key)
	case scope == ForSessionScoped:
		s.RememberScoped(scopedApprovals(key, d.Scopes)...) // scoped.go
	case scope == Always && granted == nil:
		// Only the file holds it, not the session too: a revoke (from any
		// process) then takes effect here as well, on the next call.
		if err := h.always.Add(key, h.now()); err != nil {
			return fmt.Errorf("saving approval: %w", err)
		}
	}
	if h.audit != nil {
		h.audit.Write(approveRecord(h.now(), sessionID, &key, scope, by, granted))
	}
	if h.shared.st != nil {
		h.afterApprove(s) // store.go
	}
	return nil
}

// Close releases plugins and flushes nothing else: the audit writer belongs
// to the caller. Calls deciding meanwhile finish first (each within its
// plugins' deadlines); Close waits for them until ctx is done, and the
// plugins are closed when the last one ends either way. Later calls must
// not be made.
func (h *Host) Close(ctx context.Context) error {
	h.reloadMu.Lock()
	if h.closed {
		h.reloadMu.Unlock()
		return nil
	}
	h.closed = true
	g := h.gen.Load()
	h.reloadMu.Unlock()
	g.retire()
	select {
	case <-g.done:
		return g.closeErr
	case <-ctx.Done():
		return fmt.Errorf("closing the host: calls still deciding: %w", ctx.Err())
	}
}

// Settings are the host's options. The zero value is not useful; start from
// Defaults and chain With... calls, each of which returns a new value.
type Settings struct {
	audit             io.Writer
	auditSink         audit.Sink
	approvalsFile     string
	pluginCacheDir    string
	noPluginDiskCache bool
	logger            *slog.Logger
	plugins           []Plugin
	maxResult         int
	noTrace           bool
	pluginRuntime     *plugin.Runtime
	builtins          map[string][]byte
	store             session.Shared
}

// Defaults returns the default settings: no audit log, no persistent
// approvals, plugin cache in the user cache dir, 4 KiB result summaries.
func Defaults() Settings { return Settings{maxResult: 4 << 10} }

// WithAuditLog writes a JSON Lines record per decision to w.
func (s Settings) WithAuditLog(w io.Writer) Settings { s.audit = w; return s }

// WithAuditExport also hands every audit record to sink, with the context
// of the Check or Observe that wrote it (`serve` exports them as
// OpenTelemetry logs in the call's trace). It works with or without
// WithAuditLog; like an audit log, it makes Observes report true.
func (s Settings) WithAuditExport(sink audit.Sink) Settings { s.auditSink = sink; return s }

// WithApprovalsFile keeps "always" approvals in the file at path.
func (s Settings) WithApprovalsFile(path string) Settings { s.approvalsFile = path; return s }

// WithBuiltins lets a [policies.<name>] table name one of modules with
// builtin = "<name>". The host ships no modules of its own; a program that
// offers toolwarden's first-party plugins passes plugins.Modules().
func (s Settings) WithBuiltins(modules map[string][]byte) Settings { s.builtins = modules; return s }

// WithPluginCacheDir caches compiled plugin code under dir instead of the
// user cache dir.
func (s Settings) WithPluginCacheDir(dir string) Settings { s.pluginCacheDir = dir; return s }

// WithoutPluginDiskCache keeps compiled plugin code in memory only.
func (s Settings) WithoutPluginDiskCache() Settings { s.noPluginDiskCache = true; return s }

// WithPluginRuntime loads the configured plugins into rt instead of a
// runtime of the host's own. The caller owns rt and closes it after every
// host that uses it; closing a host (or reloading it) closes only that
// host's plugins. Hosts built one after another on one runtime compile
// each plugin binary once, which is what a long-lived process that makes a
// host per request needs. The runtime's own options (cache dir, logger)
// apply, not the host's WithPluginCacheDir, WithoutPluginDiskCache and
// WithLogger.
func (s Settings) WithPluginRuntime(rt *PluginRuntime) Settings { s.pluginRuntime = rt; return s }

// WithLogger receives plugin log output (nil: slog.Default()).
func (s Settings) WithLogger(l *slog.Logger) Settings { s.logger = l; return s }

// WithPlugin adds a Go-native plugin after the configured ones. New fails
// when p implements none of Checker, Observer and Lister.
func (s Settings) WithPlugin(p Plugin) Settings {
	s.plugins = append(s.plugins[:len(s.plugins):len(s.plugins)], p)
	return s
}

// WithResultLimit bounds the result text plugins see in Observe.
func (s Settings) WithResultLimit(n int) Settings { s.maxResult = n; return s }

// WithoutTrace leaves Decision.Trace empty, and the audit log's trace with
// it, for callers that never show the trace: Check then skips building it
// (see BenchmarkCheckTrace for what that saves).
func (s Settings) WithoutTrace() Settings { s.noTrace = true; return s }
