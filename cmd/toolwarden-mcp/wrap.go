package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/sdk/proxy"
)

func init() {
	register("wrap", runWrap)
}

func runWrap(e *env, args []string) int {
	fs, pf := newServeFlags(e, "wrap", "wrap [--config F]... [--app NAME] [flags] -- CMD [ARGS...]",
		`Serves MCP on stdin/stdout in front of the stdio MCP server CMD: same tools, same
names, same definitions, but hidden tools are left out, every call is decided by
policy, and asks become approval prompts (MCP elicitation) in the client.`)
	app := fs.String("app", "", "the server's name for policy ([apps.<name>], [mcp_servers.<name>]); default: derived from the command")
	toolTimeout := fs.Duration("tool-timeout", 0, "per-call timeout (default: tool_timeout_sec of [mcp_servers.<app>], else 300s)")
	startupTimeout := fs.Duration("startup-timeout", 0, "timeout to start the server (default: startup_timeout_sec of [mcp_servers.<app>], else 30s)")
	watch := watchFlag(fs)
	if code, ok := fs.ParseArgs(args); !ok {
		return code
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return fs.UsageError("no server command given (toolwarden wrap --app NAME -- CMD ARGS...)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, cfg, cleanup, err := pf.startHost(ctx, e)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden wrap:", err)
		return exitError
	}
	defer cleanup()
	name := *app
	if name == "" {
		var note string
		name, note = wrapAppName(cfg, rest[0], rest[1:])
		if note != "" {
			fmt.Fprintln(e.stderr, "toolwarden wrap:", note)
		}
	}

	// An admin's server allow-lists hold for the command wrap is given too:
	// a command line must not get round them.
	if err := cfg.ServerAllowed(name, &config.Server{Command: rest[0], Args: rest[1:]}); err != nil {
		fmt.Fprintln(e.stderr, "toolwarden wrap: refusing to start the server:", err)
		return exitError
	}
	spec := proxy.Upstream{Name: name, Command: rest[0], Args: rest[1:], Stderr: e.stderr}
	if s, ok := cfg.Servers[name]; ok {
		spec.StartupTimeout = s.StartupTimeout()
		spec.ToolTimeout = s.ToolTimeout()
		spec.ClientCapabilities = s.ClientCapabilities
	}
	if *toolTimeout > 0 {
		spec.ToolTimeout = *toolTimeout
	}
	if *startupTimeout > 0 {
		spec.StartupTimeout = *startupTimeout
	}
	opts := pf.options(e).WithWaitForUpstreams(true)
	p := proxy.New(h, []proxy.Upstream{spec}, opts)
	defer watch(ctx, e, pf, h, p)()
	if err := p.Run(ctx, e.stdin, e.stdout); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(e.stderr, "toolwarden wrap:", err)
		return exitError
	}
	return exitOK
}
