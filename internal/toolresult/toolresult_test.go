package toolresult

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
)

func TestReasonsNameACodeOnlyWhenThereIsOne(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		reasons []policy.Reason
		want    string
	}{
		{"no reasons give an empty line", nil, ""},
		{"a reason with a code ends with it in brackets", []policy.Reason{{Message: "writes", Code: "destructive"}}, "writes [destructive]"},
		{"a reason without a code has no empty brackets", []policy.Reason{{Message: "plugin said so"}}, "plugin said so"},
		{"reasons are joined in order", []policy.Reason{{Message: "a", Code: "x"}, {Message: "b"}}, "a [x]; b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Reasons(&host.Decision{Reasons: tt.reasons}); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTextIsTheTextContentElseTheStructuredContent(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		res  *mcp.CallToolResult
		want string
	}{
		{"text parts are joined by newlines", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("a"), mcp.NewTextContent("b")}}, "a\nb"},
		{"structured content is read as sent", &mcp.CallToolResult{StructuredContent: map[string]any{"k": 1}, RawStructuredContent: json.RawMessage(`{"k": 1}`)}, `{"k": 1}`},
		{"structured content without its bytes is encoded", &mcp.CallToolResult{StructuredContent: map[string]any{"k": 1}}, `{"k":1}`},
		{"text wins over structured content", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("t")}, StructuredContent: map[string]any{"k": 1}}, "t"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Text(tt.res); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
