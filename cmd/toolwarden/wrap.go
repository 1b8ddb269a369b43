package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/sdk/proxy"
)

func init() {
	register(command{name: "wrap", summary: cli.WrapSummary, run: runWrap})
}

func runWrap(e *env, args []string) int {
	// The hook reads an agent's `toolwarden wrap` server with this parser
	// too, so both agree on the command that runs.
	fs, wf, code, ok := cli.ParseWrap(e.stdout, e.stderr, serveDefaults, args)
	if !ok {
		return code
	}
	pf := &serveFlags{&wf.ServeFlags}
	app, toolTimeout, startupTimeout := &wf.App, &wf.ToolTimeout, &wf.StartupTimeout
	watch := watchFlag(fs)
	rest := wf.Command
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
	if err := cfg.ServerAllowed(name, wrapServer(rest)); err != nil { // wrap_allowlist.go
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
	// The client shows the server the user configured, not toolwarden.
	opts := pf.options(e).WithWaitForUpstreams(true).WithUpstreamServerInfo(true)
	p := proxy.New(h, []proxy.Upstream{spec}, opts)
	defer watch(ctx, e, pf, h, p)()
	if err := p.Run(ctx, e.stdin, e.stdout); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(e.stderr, "toolwarden wrap:", err)
		return exitError
	}
	return exitOK
}
