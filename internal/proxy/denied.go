package proxy

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
)

// DeniedResult is the tool error the proxy answers a denied call to tool
// with (a hidden tool's included). The sdk package's guard answers with
// the same words, so that an agent reads one refusal whichever way
// toolwarden sits in front of its servers.
func DeniedResult(tool string, d *host.Decision) *mcp.CallToolResult {
	return denied(&route{name: tool}, d)
}
