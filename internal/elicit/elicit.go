// Package elicit puts the approval question (internal/approval) into
// MCP's elicitation types and reads the human's answer back out of them.
// It is apart from the question so that the hook, which never elicits,
// does not link mcp-go and its JSON-schema library (their package init is
// part of every hook process's start).
package elicit

import (
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/approval"
)

// Params is the question as a form-mode elicitation request.
func Params(q *approval.Question) mcp.ElicitationParams {
	f := q.Form()
	return mcp.ElicitationParams{Message: f.Message, RequestedSchema: f.Schema}
}

// Answer reads the option the human chose (approval.Question.Answer); no
// result at all is a deny.
func Answer(q *approval.Question, r *mcp.ElicitationResult) (string, error) {
	if r == nil {
		return policy.OptionDeny, errors.New("no answer")
	}
	return q.Answer(string(r.Action), r.Content)
}
