package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"sort"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
)

// server is one started MCP server.
type server struct {
	name   string
	client *client.Client
}

// startServers starts every enabled stdio server of [mcp_servers.*], in
// name order, and initializes each. Streamable HTTP servers are skipped
// (with a note on log): this example keeps to stdio.
func startServers(ctx context.Context, cfg *host.Config, log io.Writer) ([]*server, error) {
	names := make([]string, 0, len(cfg.Servers))
	for name := range cfg.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []*server
	for _, name := range names {
		s := cfg.Servers[name]
		if s.Enabled != nil && !*s.Enabled {
			continue
		}
		if s.Transport() != "stdio" {
			fmt.Fprintf(log, "agent: skipping %s: only stdio servers are started by this example\n", name)
			continue
		}
		c, err := startStdio(ctx, s, log)
		if err != nil {
			closeServers(out)
			return nil, fmt.Errorf("starting server %s (%s): %w", name, s.Command, err)
		}
		out = append(out, &server{name: name, client: c})
	}
	return out, nil
}

// startStdio starts one server: its command and args, the agent's
// environment plus the server's env, in its cwd; its stderr goes to log.
func startStdio(ctx context.Context, s *host.Server, log io.Writer) (*client.Client, error) {
	env := stdioEnv(s)
	c, err := client.NewStdioMCPClientWithOptions(s.Command, nil, s.Args,
		transport.WithCommandStderrWriter(log),
		transport.WithCommandFunc(func(ctx context.Context, command string, _, args []string) (*exec.Cmd, error) {
			cmd := exec.CommandContext(ctx, command, args...)
			cmd.Env = env
			cmd.Dir = s.Cwd
			return cmd, nil
		}))
	if err != nil {
		return nil, err
	}
	ictx, cancel := context.WithTimeout(ctx, s.StartupTimeout())
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "toolwarden-example-agent", Version: "1"}
	if _, err := c.Initialize(ictx, init); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return c, nil
}

func closeServers(servers []*server) {
	for _, s := range servers {
		s.client.Close()
	}
}
