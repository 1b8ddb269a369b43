package channel_test

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/policy"
)

func question() *channel.Question {
	d := &policy.Decision{Decision: policy.Ask, Tool: "write_file", Server: "fs", Rememberable: true,
		Reasons: []policy.Reason{{Message: "auto: tool is destructive"}}}
	d.Prompt = &policy.Prompt{Title: "Allow write_file on fs?", Options: []string{policy.OptionAllowOnce, policy.OptionAllowSession, policy.OptionDeny}}
	q := channel.NewQuestion("fs__write_file", d, json.RawMessage(`{"path":"/tmp/x"}`), false)
	return &q
}

// The question goes out as an elicitation MCP's own validation accepts,
// and the answer comes back as the option chosen; no result, or an
// answer the question did not offer, is a deny.
func TestTheQuestionRoundTripsThroughMCPTypes(t *testing.T) {
	q := question()
	p := q.Params()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	if p.Message != q.Message() {
		t.Fatalf("message %q", p.Message)
	}
	result := func(action mcp.ElicitationResponseAction, content any) *mcp.ElicitationResult {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action, Content: content}}
	}
	for _, c := range []struct {
		name    string
		res     *mcp.ElicitationResult
		want    string
		wantErr bool
	}{
		{"an offered option", result(mcp.ElicitationResponseActionAccept, map[string]any{channel.Field: policy.OptionAllowSession}), policy.OptionAllowSession, false},
		{"a decline", result(mcp.ElicitationResponseActionDecline, nil), policy.OptionDeny, false},
		{"a cancel", result(mcp.ElicitationResponseActionCancel, nil), policy.OptionDeny, false},
		{"an option not offered", result(mcp.ElicitationResponseActionAccept, map[string]any{channel.Field: policy.OptionAlways}), policy.OptionDeny, true},
		{"no result", nil, policy.OptionDeny, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := q.Elicited(c.res)
			if got != c.want || (err != nil) != c.wantErr {
				t.Fatalf("got %q, %v; want %q (error %v)", got, err, c.want, c.wantErr)
			}
		})
	}
}
