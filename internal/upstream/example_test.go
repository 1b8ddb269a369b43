package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// Start server-filesystem with no folder of its own: it asks its client for
// roots, and the client answers with one folder. Its log messages at
// warning and above are printed.
func ExampleClient_OnServerRequest() {
	ctx := context.Background()
	c := upstream.New(serverspec.Spec{
		Name:    "fs",
		Command: "npx",
		Args:    []string{"-y", "@modelcontextprotocol/server-filesystem"},
	}, "1.0.0", nil)
	c.OnServerRequest(func(ctx context.Context, c *upstream.Client, method string, params json.RawMessage) (json.RawMessage, *upstream.RPCError) {
		if method != string(mcp.MethodListRoots) {
			return nil, &upstream.RPCError{Code: mcp.METHOD_NOT_FOUND, Message: method + " is not answered here"}
		}
		return json.RawMessage(`{"roots":[{"uri":"file:///home/me/src"}]}`), nil
	})
	c.SetClientCapabilities(mcp.ClientCapabilities{Roots: &struct {
		ListChanged bool `json:"listChanged,omitempty"`
	}{}})
	c.OnNotify(func(c *upstream.Client, method string, params json.RawMessage) {
		if method == string(mcp.MethodNotificationMessage) {
			fmt.Printf("%s: %s\n", c.Name(), params)
		}
	})
	if err := c.Start(ctx); err != nil {
		panic(err)
	}
	defer c.Close()
	_ = c.SetLogLevel(ctx, mcp.LoggingLevelWarning)
	raw, err := c.Call(ctx, "list_allowed_directories", json.RawMessage(`{}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(raw))
}
