package main

import (
	"fmt"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/proxy"
	"github.com/toolwarden/toolwarden/internal/serverspec"
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
	return pf.serve(e, fs, func(cfg *config.Config) ([]serverspec.Spec, proxy.Options, error) {
		spec, err := wrapSpec(cfg, e, wf)
		if err != nil {
			return nil, proxy.Options{}, err
		}
		// The client shows the server the user configured, not toolwarden.
		opts := pf.options(e).WithWaitForUpstreams(true).WithUpstreamServerInfo(true)
		return []serverspec.Spec{spec}, opts, nil
	})
}

// wrapSpec is the one server wrap runs: its name (--app, else derived from
// the command), the timeouts its [mcp_servers.<name>] and the flags set,
// once the admin's allow-lists have let it through.
func wrapSpec(cfg *config.Config, e *env, wf *cli.WrapFlags) (serverspec.Spec, error) {
	rest := wf.Command
	name := wf.App
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
		return serverspec.Spec{}, fmt.Errorf("refusing to start the server: %w", err)
	}
	spec := serverspec.Spec{Name: name, Command: rest[0], Args: rest[1:], Stderr: e.stderr}
	if s, ok := cfg.Servers[name]; ok {
		spec.StartupTimeout = s.StartupTimeout()
		spec.ToolTimeout = s.ToolTimeout()
		spec.ClientCapabilities = s.ClientCapabilities
	}
	if wf.ToolTimeout > 0 {
		spec.ToolTimeout = wf.ToolTimeout
	}
	if wf.StartupTimeout > 0 {
		spec.StartupTimeout = wf.StartupTimeout
	}
	return spec, nil
}
