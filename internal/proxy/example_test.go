package proxy_test

import (
	"context"
	"os"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/proxy"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// Serve server-filesystem over stdio behind toolwarden, as toolwarden wrap
// does: same tool names, every call decided, asks sent to the client.
func ExampleNew() {
	ctx := context.Background()
	h, err := host.New(ctx, config.Default(), host.Defaults().WithApprovalsFile("/tmp/approvals.json"))
	if err != nil {
		panic(err)
	}
	defer h.Close(ctx)
	fs := serverspec.Spec{
		Name:        "fs",
		Command:     "npx",
		Args:        []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"},
		ToolTimeout: 2 * time.Minute,
		Stderr:      os.Stderr,
	}
	p := proxy.New(h, []serverspec.Spec{fs}, proxy.Defaults().WithWaitForUpstreams(true))
	if err := p.Run(ctx, os.Stdin, os.Stdout); err != nil {
		panic(err)
	}
}

// Aggregate every enabled [mcp_servers.*] of a config as <server>__<tool>,
// as toolwarden proxy does.
func ExampleOptions_WithNamespace() {
	ctx := context.Background()
	cfg, err := config.Load(os.ExpandEnv("$HOME/.codex/config.toml"))
	if err != nil {
		panic(err)
	}
	h, err := host.New(ctx, cfg, host.Defaults())
	if err != nil {
		panic(err)
	}
	var specs []serverspec.Spec
	for _, s := range cfg.Servers {
		if config.Bool(s.Enabled, true) {
			sp, err := serverspec.FromConfig(s, os.Getenv)
			if err != nil {
				continue
			}
			specs = append(specs, sp)
		}
	}
	p := proxy.New(h, specs, proxy.Defaults().WithNamespace(true))
	_ = p.Run(ctx, os.Stdin, os.Stdout)
}
