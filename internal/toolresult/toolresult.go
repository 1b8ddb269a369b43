// Package toolresult holds the text handling that the proxy and the Go
// guard (package sdk) share, so that both read a result and word a refusal
// alike: what Observe sees of a result, a decision's reasons as one line,
// and a tool error the model reads.
package toolresult

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
)

// Text is what Observe sees of a result: its text content, else its
// structured content as JSON.
func Text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(mcp.TextContent); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
		}
	}
	if b.Len() == 0 && r.StructuredContent != nil {
		if len(r.RawStructuredContent) > 0 {
			return string(r.RawStructuredContent)
		}
		if j, err := json.Marshal(r.StructuredContent); err == nil {
			return string(j)
		}
	}
	return b.String()
}

// Reasons joins a decision's reasons into one line, each with its code in
// brackets when it has one.
func Reasons(d *host.Decision) string {
	msgs := make([]string, 0, len(d.Reasons))
	for _, r := range d.Reasons {
		if r.Code != "" {
			msgs = append(msgs, r.Message+" ["+r.Code+"]")
		} else {
			msgs = append(msgs, r.Message)
		}
	}
	return strings.Join(msgs, "; ")
}

// Error is a tool error (IsError) with the formatted text: how a call that
// was not made is answered, so the model reads why.
func Error(format string, args ...any) *mcp.CallToolResult {
	return mcp.NewToolResultError(fmt.Sprintf(format, args...))
}
