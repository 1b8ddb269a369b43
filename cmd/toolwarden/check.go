package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/host/policy"
)

func init() {
	register(command{name: "check", summary: "decide tool calls and print each decision as JSON", run: func(e *env, args []string) int {
		return runCheck(e, "check", args)
	}})
	register(command{name: "explain", summary: "decide tool calls and print a readable trace of every step", run: func(e *env, args []string) int {
		return runCheck(e, "explain", args)
	}})
}

// callFile is a call as check reads it: the MCP tool definition exactly as
// in tools/list, plus optionally the result, to run Observe afterwards.
type callFile struct {
	Session   string          `json:"session"`
	Server    string          `json:"server"`
	Tool      json.RawMessage `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// ServerContext is what is known of the server's paths, against which
	// path rules resolve relative arguments (absent: nothing is known).
	ServerContext *host.ServerContext `json:"server_context"`
	// Result, when present and the call is allowed (or approved), is
	// observed after the decision: {"text": "...", "isError": false}.
	Result *struct {
		Text    string `json:"text"`
		IsError bool   `json:"isError"`
	} `json:"result"`
}

func runCheck(e *env, name string, args []string) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var configs stringList
	fs.Var(&configs, "config", "config file (repeatable; later files override earlier)")
	sessionID := fs.String("session", "cli", "session for calls that name none")
	approve := fs.String("approve", "", "answer every rememberable ask as the user would: once, session or always")
	approveSession := fs.Bool("approve-session", false, "same as --approve=session")
	approvals := fs.String("approvals", "", "persistent approvals file (for --approve=always)")
	auditPath := fs.String("audit", "", "append a JSON Lines record per decision to this file")
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "usage: toolwarden %s [--config F]... [--session ID] [--approve-session] [CALL.json ...]\n\n", name)
		fmt.Fprintln(e.stderr, "Reads calls ({\"session\",\"server\",\"tool\",\"arguments\"}) from files or stdin.")
		fmt.Fprintln(e.stderr, "Calls in one invocation share a session.")
		if name == "check" {
			fmt.Fprintln(e.stderr, "Exit: 0 allow, 10 ask, 20 deny (the strictest decision), 1 bad input or config.")
		} else {
			fmt.Fprintln(e.stderr, "Exit: 0 when every call was explained, 1 bad input or config.")
		}
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if *approveSession {
		*approve = "session"
	}
	var scope host.Scope
	if *approve != "" {
		s, err := host.ParseScope(*approve)
		if err != nil {
			fmt.Fprintln(e.stderr, "toolwarden:", err)
			return exitUsage
		}
		scope = s
	}

	cfg, err := loadConfig(configs)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		return exitError
	}
	settings := host.Defaults()
	if *approvals != "" {
		settings = settings.WithApprovalsFile(*approvals)
	}
	if *auditPath != "" {
		f, err := os.OpenFile(*auditPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(e.stderr, "toolwarden:", err)
			return exitError
		}
		defer f.Close()
		settings = settings.WithAuditLog(f)
	}
	ctx := context.Background()
	h, err := host.New(ctx, cfg, settings)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden:", err)
		return exitError
	}
	defer h.Close(ctx)
	for _, w := range h.Warnings() {
		fmt.Fprintln(e.stderr, "toolwarden: warning:", w)
	}

	calls, err := readCalls(e, fs.Args())
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden:", err)
		return exitError
	}
	if len(calls) == 0 {
		fmt.Fprintln(e.stderr, "toolwarden: no calls given (pass CALL.json files or pipe calls on stdin)")
		return exitError
	}
	worst := policy.Allow
	for i, c := range calls {
		call, err := c.call(*sessionID)
		if err != nil {
			fmt.Fprintf(e.stderr, "toolwarden: %s: %v\n", c.where, err)
			return exitError
		}
		d := h.Check(ctx, call)
		approved := ""
		if d.Decision == policy.Ask && *approve != "" && (d.Rememberable || scope == host.Once) {
			if err := h.Approve(call.Session, &d, scope); err != nil {
				fmt.Fprintf(e.stderr, "toolwarden: %s: approve: %v\n", c.where, err)
				return exitError
			}
			approved = scope.String()
		}
		var added []string
		if r := c.file.Result; r != nil && (d.Decision == policy.Allow || approved != "") {
			added = h.Observe(ctx, call, &d, host.Result{Text: r.Text, IsError: r.IsError})
		}
		if name == "explain" {
			if i > 0 {
				fmt.Fprintln(e.stdout)
			}
			writeExplain(e.stdout, c.where, call, &d, approved, added)
		} else {
			b, err := json.Marshal(d)
			if err != nil {
				fmt.Fprintln(e.stderr, "toolwarden:", err)
				return exitError
			}
			fmt.Fprintln(e.stdout, string(b))
		}
		if d.Decision > worst {
			worst = d.Decision
		}
	}
	if name == "explain" {
		// explain is for people: it succeeds whenever it could explain.
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

// loadConfig loads the given layers, or the embedded default.
func loadConfig(paths []string) (*config.Config, error) {
	if len(paths) == 0 {
		return config.Default(), nil
	}
	return config.Load(paths...)
}

type sourcedCall struct {
	where string
	file  callFile
}

func (c *sourcedCall) call(defaultSession string) (host.Call, error) {
	f := &c.file
	if f.Server == "" {
		return host.Call{}, errors.New(`call has no "server"`)
	}
	if len(f.Tool) == 0 {
		return host.Call{}, errors.New(`call has no "tool" (the MCP tool definition as in tools/list)`)
	}
	tool, err := host.ParseTool(f.Tool)
	if err != nil {
		return host.Call{}, err
	}
	args := f.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	} else if t := bytes.TrimSpace(args); len(t) == 0 || t[0] != '{' {
		return host.Call{}, errors.New(`"arguments" must be a JSON object`)
	}
	s := f.Session
	if s == "" {
		s = defaultSession
	}
	return host.Call{Session: s, Server: f.Server, Tool: tool, Arguments: args, Context: f.ServerContext}, nil
}

// readCalls reads a stream of call objects from each file, or from stdin.
func readCalls(e *env, files []string) ([]sourcedCall, error) {
	var out []sourcedCall
	read := func(name string, r io.Reader) error {
		dec := json.NewDecoder(r)
		for n := 1; ; n++ {
			var f callFile
			err := dec.Decode(&f)
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: call %d: %w", name, n, err)
			}
			out = append(out, sourcedCall{where: fmt.Sprintf("%s#%d", name, n), file: f})
		}
	}
	if len(files) == 0 {
		return out, read("stdin", e.stdin)
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		err = read(name, f)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// writeExplain prints a decision as a human reads it: one line per step.
func writeExplain(w io.Writer, where string, c host.Call, d *policy.Decision, approved string, added []string) {
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
