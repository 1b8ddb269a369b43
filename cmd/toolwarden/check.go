package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

func init() {
	register(command{name: "check", summary: "decide tool calls and print each decision as JSON", run: func(e *env, args []string) int {
		return runCheck(e, "check", args)
	}})
	register(command{name: "explain", summary: "decide tool calls and print a readable trace of every step", run: func(e *env, args []string) int {
		return runCheck(e, "explain", args)
	}})
}

// checkOptions are check's and explain's flags.
type checkOptions struct {
	name      string // "check" or "explain"
	configs   stringList
	reqs      stringList
	sessionID string
	approve   string
	scope     host.Scope
	approvals string
	audit     string
	files     []string
	observe   observeResultFlag
	cwd, home pathFlag // check_context.go
	principal string   // decide as this caller (with groups); "": no caller
	groups    stringList
}

func runCheck(e *env, name string, args []string) int {
	o, code, ok := parseCheckFlags(e, name, args)
	if !ok {
		return code
	}
	calls, err := readCalls(e, o.files)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden %s: %v\n", name, err)
		return exitError
	}
	ctx := context.Background()
	h, cleanup, err := o.startHost(ctx, e)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden %s: %v\n", name, err)
		return exitError
	}
	defer cleanup()
	worst := policy.Allow
	for i, c := range calls {
		d, err := o.decide(ctx, e, h, i, &c)
		if err != nil {
			fmt.Fprintf(e.stderr, "toolwarden %s: %v\n", name, err)
			return exitError
		}
		worst = max(worst, d)
	}
	return o.exitCode(worst)
}

func parseCheckFlags(e *env, name string, args []string) (*checkOptions, int, bool) {
	about := `Reads calls, JSON objects {"session", "server", "tool", "arguments",
"server_context", "result"}, one after another, from each CALL.json file in turn;
"-" or no file reads stdin. Calls in one invocation share a session. An empty file,
an unknown key or bad JSON is an error at file:line:col.
Each call sends plugins check (and list first, when a policy handles list); observe
only for an allowed call with a "result", or with --observe-result.
Paths resolve as the running proxy would resolve them: against the server's
directory and home as the proxy starts it ([mcp_servers.<server>] of the config,
else a server you start here: your working directory and home). --cwd and --home
replace those; each field of a call's "server_context" replaces both. A path that
still cannot be resolved is named in the trace with why.`
	if name == "check" {
		about += "\nPrints each decision as a JSON line.\nExit: 0 allow, 10 ask, 20 deny (the strictest decision), 1 bad input or config, 2 bad usage."
	} else {
		about += "\nPrints a readable trace of every step of each decision.\nExit: 0 when every call was explained, 1 bad input or config, 2 bad usage."
	}
	fs := newCmdFlags(e, name, name+" [--config F]... [--session ID] [--approve-session] [--principal NAME [--group G]...] [CALL.json|-]...", about)
	o := &checkOptions{name: name}
	fs.Var(&o.configs, "config", "config file (repeatable; later files override earlier; default: the system and user config.toml that exist)")
	fs.Var(&o.reqs, "requirements", "requirements file an admin sets (repeatable; with /etc/codex/requirements.toml, /etc/toolwarden/requirements.toml and $TOOLWARDEN_REQUIREMENTS)")
	fs.StringVar(&o.sessionID, "session", "cli", "session for calls that name none")
	fs.StringVar(&o.approve, "approve", "", "answer every rememberable ask as the user would: once, session or always")
	approveSession := fs.Bool("approve-session", false, "same as --approve=session")
	fs.StringVar(&o.approvals, "approvals", "", "persistent approvals file (for --approve=always)")
	fs.StringVar(&o.audit, "audit", "", "append a JSON Lines record per decision to this file")
	fs.Var(&o.observe, "observe-result", observeResultUsage)
	fs.Var(&o.cwd, "cwd", "the server's working directory to resolve paths against (default: as the proxy would start the server; \"\": unknown)")
	fs.Var(&o.home, "home", "the server's home directory, for \"~\" (default: as the proxy would start the server; \"\": unknown)")
	fs.StringVar(&o.principal, "principal", "", "decide as this caller, as `toolwarden serve` would after authenticating it (default: no caller, as the local front ends decide)")
	fs.Var(&o.groups, "group", "a group of the --principal caller (repeatable)")
	files, code, ok := fs.parseInterleaved(args)
	if !ok {
		return nil, code, false
	}
	if len(o.groups) > 0 && o.principal == "" {
		return nil, fs.usageError("--group needs --principal: a caller's groups come with its name"), false
	}
	o.files = files
	if *approveSession {
		o.approve = "session"
	}
	if o.approve != "" {
		s, err := host.ParseScope(o.approve)
		if err != nil {
			return nil, fs.usageError("--approve: %v", err), false
		}
		o.scope = s
	}
	return o, exitOK, true
}

// startHost builds the host the calls are decided by; cleanup closes it
// and the audit file.
func (o *checkOptions) startHost(ctx context.Context, e *env) (*host.Host, func(), error) {
	cfg, err := loadConfig(e, o.configs, o.reqs)
	if err != nil {
		return nil, nil, err
	}
	settings := hostDefaults()
	if o.approvals != "" {
		settings = settings.WithApprovalsFile(o.approvals)
	}
	// check and explain try calls: they write a log only when asked to,
	// rotated as the config's [audit] table says.
	var auditFile *audit.File
	if o.audit != "" && o.audit != auditOff {
		if auditFile, err = openAuditLog(e, o.audit, cfg, nil); err != nil {
			return nil, nil, err
		}
		settings = settings.WithAuditLog(auditFile)
	}
	h, err := host.New(ctx, cfg, settings)
	if err != nil {
		if auditFile != nil {
			auditFile.Close()
		}
		return nil, nil, err
	}
	for _, w := range h.Warnings() {
		fmt.Fprintf(e.stderr, "toolwarden %s: warning: %v (toolwarden validate reports it as an error)\n", o.name, w)
	}
	return h, func() {
		_ = h.Close(ctx)
		if auditFile != nil {
			auditFile.Close()
		}
	}, nil
}

// decide decides call i, approves it when --approve says so, observes its
// result, and prints the outcome; it returns the decision.
func (o *checkOptions) decide(ctx context.Context, e *env, h *host.Host, i int, c *sourcedCall) (policy.Verdict, error) {
	call, err := c.call(o.sessionID)
	if err != nil {
		return 0, err
	}
	var from string
	call.Context, from = o.callContext(e, h.Config(), call.Server, c.file.ServerContext)
	if o.principal != "" {
		if err := h.SetCaller(call.Session, host.Caller{Name: o.principal, Groups: o.groups}); err != nil {
			return 0, err
		}
	}
	d := h.Check(ctx, call)
	approved := ""
	if d.Decision == policy.Ask && o.approve != "" && (d.Rememberable || o.scope == host.Once) {
		if err := h.Approve(call.Session, &d, o.scope); err != nil {
			return 0, c.errAt("", err, "approve")
		}
		approved = o.scope.String()
	}
	var added []string
	if r, ok := o.observe.resultFor(&c.file); ok && (d.Decision == policy.Allow || approved != "") {
		added = h.Observe(ctx, call, &d, r)
	}
	d.Trace = withSteps(d.Trace, unresolvedSteps(call.Arguments, d.Flagged, call.Context))
	if o.name == "explain" {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		writeExplain(e.stdout, c.where, call, &d, approved, added, from)
		return d.Decision, nil
	}
	b, err := json.Marshal(d)
	if err != nil {
		return 0, err
	}
	fmt.Fprintln(e.stdout, string(b))
	return d.Decision, nil
}

// exitCode is check's verdict as an exit status; explain is for people and
// succeeds whenever it could explain.
func (o *checkOptions) exitCode(worst policy.Verdict) int {
	if o.name == "explain" {
		return exitOK
	}
	switch worst {
	case policy.Ask:
		return exitAsk
	case policy.Deny:
		return exitDeny
	}
	return exitOK
}

// loadConfig loads the --config layers given, else the system and user
// files that exist, else the embedded default, under the requirements in
// force: the system files, $TOOLWARDEN_REQUIREMENTS and reqs (the
// --requirements files). See cli.LoadConfig.
func loadConfig(e *env, paths, reqs []string) (*config.Config, error) {
	return cli.LoadConfig(e.getenv, paths, reqs)
}

// configPaths are the layers loadConfig reads for the --config files
// given: those, or the discovered ones.
func configPaths(e *env, given []string) []string {
	return cli.ConfigPaths(e.getenv, given)
}

// writeExplain prints a decision as a human reads it: one line per step.
func writeExplain(w io.Writer, where string, c host.Call, d *policy.Decision, approved string, added []string, from string) {
	app := d.App
	if d.Connector != "" {
		app += " (connector)"
	}
	fmt.Fprintf(w, "%s: %s/%s  app=%s  session=%s\n", where, d.Server, d.Tool, app, c.Session)
	fmt.Fprintf(w, "  definition %s\n", d.DefinitionHash)
	if !c.Tool.Declared.Empty() {
		fmt.Fprintf(w, "  declared   %s\n", c.Tool.Declared.String())
	}
	if len(c.Tool.Malformed) > 0 {
		fmt.Fprintf(w, "  malformed  %s (counted at their strict value)\n", strings.Join(c.Tool.Malformed, ", "))
	}
	fmt.Fprintf(w, "  effective  %s\n", orNone(d.Hints.String()))
	if c.Context != nil {
		fmt.Fprintf(w, "  paths      %s (%s)\n", describeContext(c.Context), from)
	}
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	for i, s := range d.Trace {
		detail := s.Detail
		if s.Elapsed > 0 {
			detail += fmt.Sprintf(" (%s)", s.Elapsed)
		}
		src := ""
		if s.Source != "" {
			src = "[" + s.Source + "]"
		}
		fmt.Fprintf(tw, "  %d. %s\t%s\t%s\t%s\n", i+1, s.Step, s.Outcome, src, detail)
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		fmt.Fprint(w, strings.TrimRight(line, " \n"))
		if strings.HasSuffix(line, "\n") {
			fmt.Fprintln(w)
		}
	}
	verdict := strings.ToUpper(d.Decision.String())
	if d.Decision == policy.Ask {
		if d.Rememberable {
			verdict += " (can be remembered)"
		} else {
			verdict += " (cannot be remembered)"
		}
	}
	fmt.Fprintf(w, "  => %s\n", verdict)
	for _, r := range d.Reasons {
		fmt.Fprintf(w, "     %s %s: %s\n", r.Source, r.Code, r.Message)
	}
	if approved != "" {
		fmt.Fprintf(w, "  approved (%s)\n", approved)
	}
	if len(added) > 0 {
		fmt.Fprintf(w, "  observe added labels: %s\n", strings.Join(added, ", "))
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none: spec defaults apply)"
	}
	return s
}
