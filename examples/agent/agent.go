package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/sdk"
)

// agent runs a model's tool calls through the guard.
type agent struct {
	guard   *sdk.Guard
	servers []*server
	out     io.Writer

	// convs holds each conversation's clients, by server.
	convs map[string]map[string]client.MCPClient
}

// mainConversation is the conversation of calls that name none.
const mainConversation = "main"

// clients returns the conversation's clients, making them on first use:
// one guarded client per server, bound to that conversation.
func (a *agent) clients(conv string) map[string]client.MCPClient {
	if cs := a.convs[conv]; cs != nil {
		return cs
	}
	s := a.guard.Session(conv)
	cs := make(map[string]client.MCPClient, len(a.servers))
	for _, srv := range a.servers {
		cs[srv.name] = s.Client(srv.name, srv.client)
	}
	a.convs[conv] = cs
	return cs
}

// tools lists what the conversation may use, server by server.
func (a *agent) tools(ctx context.Context, conv string) ([]Tool, error) {
	var out []Tool
	cs := a.clients(conv)
	for _, srv := range a.servers {
		res, err := cs[srv.name].ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			return nil, fmt.Errorf("listing the tools of %s: %w", srv.name, err)
		}
		for _, t := range res.Tools {
			out = append(out, Tool{Server: srv.name, Def: t})
		}
	}
	return out, nil
}

// run asks the model for calls until it is done, and makes each.
func (a *agent) run(ctx context.Context, m Model) error {
	tools, err := a.tools(ctx, mainConversation)
	if err != nil {
		return err
	}
	printTools(a.out, tools)
	var history []Turn
	for {
		c, done, err := m.Next(ctx, tools, history)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		turn := a.call(ctx, c)
		history = append(history, turn)
		printTurn(a.out, turn)
	}
}

// call makes one call in its conversation.
func (a *agent) call(ctx context.Context, c Call) Turn {
	if c.Conversation == "" {
		c.Conversation = mainConversation
	}
	fmt.Fprintf(a.out, "[%s] %s.%s %s\n", c.Conversation, c.Server, c.Tool, args(c))
	cl := a.clients(c.Conversation)[c.Server]
	if cl == nil {
		return Turn{Call: c, Err: fmt.Errorf("no server %q is configured", c.Server)}
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = c.Tool
	req.Params.RawArguments = c.Arguments
	res, err := cl.CallTool(ctx, req)
	return Turn{Call: c, Result: res, Err: err}
}

func args(c Call) string {
	if len(c.Arguments) == 0 {
		return "{}"
	}
	return string(c.Arguments)
}

func printTools(w io.Writer, tools []Tool) {
	byServer := map[string][]string{}
	var order []string
	for _, t := range tools {
		if _, ok := byServer[t.Server]; !ok {
			order = append(order, t.Server)
		}
		byServer[t.Server] = append(byServer[t.Server], t.Def.Name)
	}
	fmt.Fprintln(w, "tools this agent may use:")
	for _, s := range order {
		fmt.Fprintf(w, "  %s: %s\n", s, strings.Join(byServer[s], ", "))
	}
}

// maxShown bounds the result text printed per call.
const maxShown = 2000

func printTurn(w io.Writer, t Turn) {
	switch {
	case t.Err != nil:
		fmt.Fprintf(w, "  failed: %v\n", t.Err)
	case t.Result.IsError:
		fmt.Fprintf(w, "  error: %s\n", indent(resultText(t.Result)))
	default:
		fmt.Fprintf(w, "  ok: %s\n", indent(resultText(t.Result)))
	}
}

func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	s := strings.TrimRight(strings.Join(parts, "\n"), "\n")
	if len(s) > maxShown {
		s = s[:maxShown] + fmt.Sprintf("… (%d more bytes)", len(s)-maxShown)
	}
	return s
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }
