package main

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// metaTool reports the params._meta the call arrived with, as JSON: how a
// test sees that a gateway passed its trace context (traceparent) on.
func metaTool() (mcp.Tool, server.ToolHandlerFunc) {
	tool := mcp.NewTool("meta",
		mcp.WithDescription("Reports the _meta of the call as JSON."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
	)
	return tool, func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		meta := map[string]any{}
		if r.Params.Meta != nil {
			for k, v := range r.Params.Meta.AdditionalFields {
				meta[k] = v
			}
			if r.Params.Meta.ProgressToken != nil {
				meta["progressToken"] = r.Params.Meta.ProgressToken
			}
		}
		b, err := json.Marshal(meta)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(string(b)), nil
	}
}
