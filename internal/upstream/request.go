package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// Everything the client relays besides tools: prompts, resources and
// completions are plain requests (Request), and resource subscriptions are
// remembered so that a restarted server is subscribed again (Subscribe).

// Request sends one request to the server, method and params as given
// (params relayed raw; nil sends none), within the tool timeout, starting or
// restarting the server as Call does, and returns the result object
// exactly as the server wrote it. Errors are those of Call.
func (c *Client) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var p any
	if len(params) > 0 {
		if !rawjson.Valid(params) {
			return nil, errors.New("the params are not valid JSON")
		}
		p = params
	}
	cn, err := c.ready(ctx)
	if err != nil {
		return nil, err
	}
	ctx, release := c.deadlines.watch(ctx, c.spec.ToolTimeoutOrDefault())
	defer release()
	res, err := c.send(ctx, cn, method, p)
	if err == nil {
		c.succeeded()
	}
	return res, err
}

// Subscribe sends resources/subscribe for uri (params as the client sent
// them; nil sends {"uri": uri}) and, once the server agrees, remembers uri:
// a restarted server is subscribed to it again.
func (c *Client) Subscribe(ctx context.Context, uri string, params json.RawMessage) (json.RawMessage, error) {
	if params == nil {
		params = uriParams(uri)
	}
	res, err := c.Request(ctx, string(mcp.MethodResourcesSubscribe), params)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.subs == nil {
		c.subs = map[string]struct{}{}
	}
	c.subs[uri] = struct{}{}
	c.mu.Unlock()
	return res, nil
}

// Unsubscribe forgets uri and sends resources/unsubscribe for it (params
// as for Subscribe).
func (c *Client) Unsubscribe(ctx context.Context, uri string, params json.RawMessage) (json.RawMessage, error) {
	c.mu.Lock()
	delete(c.subs, uri)
	c.mu.Unlock()
	if params == nil {
		params = uriParams(uri)
	}
	return c.Request(ctx, string(mcp.MethodResourcesUnsubscribe), params)
}

// Subscribed reports whether uri is subscribed (by Subscribe, and not
// unsubscribed since).
func (c *Client) Subscribed(uri string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.subs[uri]
	return ok
}

func uriParams(uri string) json.RawMessage {
	b, _ := json.Marshal(struct {
		URI string `json:"uri"`
	}{uri})
	return b
}

// resubscribe subscribes a new connection to the URIs the last one was
// subscribed to (a restarted server remembers none).
func (c *Client) resubscribe(cn *conn) {
	if cn.caps.Resources == nil || !cn.caps.Resources.Subscribe {
		return
	}
	c.mu.Lock()
	uris := make([]string, 0, len(c.subs))
	for u := range c.subs {
		uris = append(uris, u)
	}
	c.mu.Unlock()
	slices.Sort(uris)
	for _, u := range uris {
		ctx, cancel := context.WithTimeout(context.Background(), c.spec.StartupTimeoutOrDefault())
		_, err := c.send(ctx, cn, string(mcp.MethodResourcesSubscribe), uriParams(u))
		cancel()
		if err != nil {
			c.log.Warn("resubscribing to a resource after a restart failed", "server", c.spec.Name, "uri", u, "err", err)
			if cn.dead.Load() {
				return
			}
		}
	}
}

// connected tells the owner a connection came up: its prompts and
// resources may differ from what was listed before (see OnNotify).
func (c *Client) connected(cn *conn) {
	if c.onNotify == nil {
		return
	}
	if cn.caps.Prompts != nil {
		c.onNotify(c, mcp.MethodNotificationPromptsListChanged, nil)
	}
	if cn.caps.Resources != nil {
		c.onNotify(c, mcp.MethodNotificationResourcesListChanged, nil)
	}
}

// notify hands a notification from the server to the owner.
func (c *Client) notify(method string, params mcp.NotificationParams) {
	if c.onNotify == nil {
		return
	}
	if len(params.Meta) == 0 {
		params.Meta = nil // mcp-go makes an absent _meta an empty one
	}
	var raw json.RawMessage
	if params.Meta != nil || len(params.AdditionalFields) > 0 {
		if b, err := json.Marshal(params); err == nil {
			raw = b
		}
	}
	c.onNotify(c, method, raw)
}
