// Command agent is a small terminal agent on mcp-go whose tool calls go
// through toolwarden: it starts the stdio servers of a Codex config's
// [mcp_servers.*], lists the tools it may use, and makes the calls a plan
// file (or the human at its prompt) asks for, asking about the ones policy
// says to ask about. See README.md.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/mark3labs/mcp-go/client"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/plugins"
	"github.com/toolwarden/toolwarden/sdk"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("agent", flag.ContinueOnError)
	fl.SetOutput(stderr)
	configPath := fl.String("config", "", "Codex config (config.toml) whose [mcp_servers.*] to start and whose rules decide (required)")
	planPath := fl.String("plan", "", "plan file of tool calls (JSON array or JSON Lines of {conversation?, server, tool, arguments}); without it, calls are read at the prompt")
	approve := fl.String("approve", "ask", "who answers asks: ask (the controlling terminal), or for runs without a human: deny, once, session, always")
	approvals := fl.String("approvals", "", "file that keeps \"always\" approvals (without it, always is not offered)")
	auditPath := fl.String("audit", "", "append a JSON Lines audit record per decision to this file")
	if err := fl.Parse(argv); err != nil {
		return err
	}
	if *configPath == "" {
		fl.Usage()
		return errors.New("--config is required")
	}

	cfg, err := host.LoadConfig(*configPath)
	if err != nil {
		return err
	}
	settings := host.Defaults().WithBuiltins(plugins.Modules())
	if *approvals != "" {
		settings = settings.WithApprovalsFile(*approvals)
	}
	if *auditPath != "" {
		f, err := os.OpenFile(*auditPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		settings = settings.WithAuditLog(f)
	}
	h, err := host.New(ctx, cfg, settings)
	if err != nil {
		return err
	}
	defer h.Close(context.Background())

	approver, closeApprover, err := newApprover(*approve, stdout)
	if err != nil {
		return err
	}
	defer closeApprover()

	var model Model
	if *planPath != "" {
		if model, err = loadPlan(*planPath); err != nil {
			return err
		}
	} else {
		model = &promptModel{in: bufio.NewReader(stdin), out: stdout}
	}

	servers, err := startServers(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer closeServers(servers)

	opts := []sdk.Option{sdk.WithApprover(approver)}
	for _, srv := range servers {
		opts = append(opts, sdk.WithServerContext(srv.name, serverContext(cfg.Servers[srv.name])))
	}
	a := &agent{
		guard:   sdk.New(h, opts...),
		servers: servers,
		out:     stdout,
		convs:   map[string]map[string]client.MCPClient{},
	}
	return a.run(ctx, model)
}

// newApprover is the terminal approver for "ask", else a fixed answer.
// Either way every question and its answer are printed, so a run's output
// shows what was asked.
func newApprover(mode string, out io.Writer) (sdk.Approver, func(), error) {
	if mode == "ask" {
		t, err := sdk.OpenTerminal()
		if err != nil {
			return nil, nil, fmt.Errorf("%w; or pass --approve deny|once|session|always", err)
		}
		return announce(t, out), func() { t.Close() }, nil
	}
	a, err := sdk.ParseAnswer(mode)
	if err != nil {
		return nil, nil, fmt.Errorf("--approve: %w", err)
	}
	return announce(sdk.Fixed(a), out), func() {}, nil
}

// announce prints each question and the answer given.
func announce(a sdk.Approver, out io.Writer) sdk.Approver {
	return sdk.ApproverFunc(func(ctx context.Context, q *sdk.Question) (sdk.Answer, error) {
		ans, err := a.Approve(ctx, q)
		fmt.Fprintf(out, "  approval asked [%s] %s.%s (options %v): %s\n", q.Session, q.Server, q.Tool, q.Options, ans)
		return ans, err
	})
}
