package sdk

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
)

// guarded is a session's client of one server: tools/list filtered,
// tools/call decided, everything else passed through to the server as it
// is (resources, prompts, completion, logging, ping, notifications,
// initialize and close).
type guarded struct {
	s  *Session
	up *upstream
}

var _ MCPClient = (*guarded)(nil)

// ListTools lists the server's tools and returns those this session may
// see, as the server defined them. The list also refreshes the tool
// definitions the session's calls are decided on, so a changed definition is seen (and
// pinned, or found drifted) from here on.
func (c *guarded) ListTools(ctx context.Context, req mcp.ListToolsRequest) (*mcp.ListToolsResult, error) {
	full := req.Params.Cursor == ""
	if full {
		// Cleared before the list is read: a change announced while it
		// is read marks the definitions stale again.
		c.up.stale.Store(false)
	}
	res, err := c.up.inner.ListTools(ctx, req)
	if err != nil {
		if full {
			c.up.stale.Store(true)
		}
		return nil, err
	}
	parsed := c.up.parse(res.Tools)
	if full {
		c.up.replace(parsed)
	} else {
		c.up.merge(parsed)
	}
	return c.filter(ctx, res, parsed), nil
}

// ListToolsByPage is ListTools for one page.
func (c *guarded) ListToolsByPage(ctx context.Context, req mcp.ListToolsRequest) (*mcp.ListToolsResult, error) {
	res, err := c.up.inner.ListToolsByPage(ctx, req)
	if err != nil {
		return nil, err
	}
	parsed := c.up.parse(res.Tools)
	c.up.merge(parsed)
	return c.filter(ctx, res, parsed), nil
}

// filter keeps, in the server's order, the tools the session may see.
func (c *guarded) filter(ctx context.Context, res *mcp.ListToolsResult, parsed map[string]*entry) *mcp.ListToolsResult {
	out := *res
	out.Tools = nil
	if c.s.ended.Load() {
		return &out
	}
	tools := make([]*host.Tool, 0, len(res.Tools))
	for i := range res.Tools {
		if e := parsed[res.Tools[i].Name]; e != nil {
			tools = append(tools, e.tool)
		}
	}
	var visible map[string]bool
	c.s.g.use(func(h *host.Host) {
		kept := h.Filter(ctx, c.s.id, c.up.name, tools)
		visible = make(map[string]bool, len(kept))
		for _, t := range kept {
			visible[t.Name] = true
		}
	})
	out.Tools = make([]mcp.Tool, 0, len(visible))
	for _, t := range res.Tools {
		if visible[t.Name] {
			out.Tools = append(out.Tools, t)
			delete(visible, t.Name) // a duplicate name is listed once
		}
	}
	return &out
}

// The methods below pass through to the server. Each is written out
// rather than inherited by embedding the client: a method mcp-go adds to
// client.MCPClient must fail to compile here, not reach the server
// undecided.
func (c *guarded) Initialize(ctx context.Context, req mcp.InitializeRequest) (*mcp.InitializeResult, error) {
	return c.up.inner.Initialize(ctx, req)
}

func (c *guarded) Ping(ctx context.Context) error { return c.up.inner.Ping(ctx) }

func (c *guarded) ListResourcesByPage(ctx context.Context, req mcp.ListResourcesRequest) (*mcp.ListResourcesResult, error) {
	return c.up.inner.ListResourcesByPage(ctx, req)
}

func (c *guarded) ListResources(ctx context.Context, req mcp.ListResourcesRequest) (*mcp.ListResourcesResult, error) {
	return c.up.inner.ListResources(ctx, req)
}

func (c *guarded) ListResourceTemplatesByPage(ctx context.Context, req mcp.ListResourceTemplatesRequest) (*mcp.ListResourceTemplatesResult, error) {
	return c.up.inner.ListResourceTemplatesByPage(ctx, req)
}

func (c *guarded) ListResourceTemplates(ctx context.Context, req mcp.ListResourceTemplatesRequest) (*mcp.ListResourceTemplatesResult, error) {
	return c.up.inner.ListResourceTemplates(ctx, req)
}

func (c *guarded) ReadResource(ctx context.Context, req mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return c.up.inner.ReadResource(ctx, req)
}

func (c *guarded) Subscribe(ctx context.Context, req mcp.SubscribeRequest) error {
	return c.up.inner.Subscribe(ctx, req)
}

func (c *guarded) Unsubscribe(ctx context.Context, req mcp.UnsubscribeRequest) error {
	return c.up.inner.Unsubscribe(ctx, req)
}

func (c *guarded) ListPromptsByPage(ctx context.Context, req mcp.ListPromptsRequest) (*mcp.ListPromptsResult, error) {
	return c.up.inner.ListPromptsByPage(ctx, req)
}

func (c *guarded) ListPrompts(ctx context.Context, req mcp.ListPromptsRequest) (*mcp.ListPromptsResult, error) {
	return c.up.inner.ListPrompts(ctx, req)
}

func (c *guarded) GetPrompt(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	return c.up.inner.GetPrompt(ctx, req)
}

func (c *guarded) SetLevel(ctx context.Context, req mcp.SetLevelRequest) error {
	return c.up.inner.SetLevel(ctx, req)
}

func (c *guarded) Complete(ctx context.Context, req mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return c.up.inner.Complete(ctx, req)
}

// Close closes the server's client, which every session's client of it
// shares: close it once, when the agent is done with the server. (Ending a
// conversation is Session.End.)
func (c *guarded) Close() error { return c.up.inner.Close() }

func (c *guarded) OnNotification(handler func(mcp.JSONRPCNotification)) {
	c.up.inner.OnNotification(handler)
}
