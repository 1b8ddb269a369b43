package channel

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/policy"
)

// Field is the name of the one property of the approval form.
const Field = "decision"

// ElicitationID keys the approval question in a multi round-trip
// input request (inputRequests / inputResponses).
const ElicitationID = "toolwarden.approval"

// optionTitles are the labels a client shows for each option.
var optionTitles = map[string]string{
	policy.OptionAllowOnce:    "Allow once",
	policy.OptionAllowSession: "Allow for this session",
	// The scoped option's title also names its scopes (Question.title).
	policy.OptionAllowSessionScoped: "Allow for this session for",
	policy.OptionAlways:             "Always allow (this exact tool definition)",
	policy.OptionDeny:               "Deny",
}

// Question is what the human is asked about one call.
type Question struct {
	// Tool is the name the client knows the tool by (with the server
	// prefix in proxy mode).
	Tool      string
	Decision  *policy.Decision
	Arguments json.RawMessage
	// Options are the answers offered, from the decision's prompt, minus
	// "always" when no approvals file is configured.
	Options []string
	// Drifted says the tool's definition differs from the one first seen
	// in this session.
	Drifted bool
}

// NewQuestion builds the question for an ask. always says whether an
// "always" answer can be stored. A decision that is not rememberable
// offers allow_once and deny only, whatever its prompt lists, so that the
// answers offered are the ones Host.Approve accepts.
func NewQuestion(tool string, d *policy.Decision, args json.RawMessage, always bool) Question {
	var opts []string
	if d.Prompt != nil {
		opts = d.Prompt.Options
	}
	if len(opts) == 0 {
		opts = []string{policy.OptionAllowOnce, policy.OptionDeny}
	}
	out := make([]string, 0, len(opts))
	for _, o := range opts {
		if o == policy.OptionAlways && !always {
			continue
		}
		if (o == policy.OptionAllowSession || o == policy.OptionAlways) && !d.Rememberable {
			continue
		}
		if o == policy.OptionAllowSessionScoped && (len(d.Scopes) == 0 || d.Prompt == nil || d.Prompt.Scope == "") {
			continue // nothing to scope it to: Host.Approve would refuse it
		}
		out = append(out, o)
	}
	return Question{Tool: tool, Decision: d, Arguments: args, Options: out}
}

// Message is the text shown to the human: what, why, the hints, and the
// arguments as policy.ViewArguments shows them (every key, flagged ones
// first, long values cut one by one, the digest of the whole). Everything
// from a server, a plugin or the call is escaped onto its own line, so
// none of it can pose as a line of the prompt.
func (q *Question) Message() string {
	d := q.Decision
	var b strings.Builder
	title := "Allow " + q.Tool + "?"
	if d.Prompt != nil && d.Prompt.Title != "" {
		title = d.Prompt.Title
	}
	b.WriteString("toolwarden: ")
	b.WriteString(policy.OneLine(title))
	b.WriteString("\n\nTool: ")
	b.WriteString(policy.OneLine(q.Tool))
	if d.Server != "" && q.Tool != d.Tool {
		fmt.Fprintf(&b, " (%s on server %s)", policy.OneLine(d.Tool), policy.OneLine(d.Server))
	} else if d.Server != "" {
		fmt.Fprintf(&b, " (server %s)", policy.OneLine(d.Server))
	}
	if why := reasons(d); why != "" {
		b.WriteString("\nWhy: ")
		b.WriteString(policy.OneLine(why))
	}
	if hs := d.Hints.String(); hs != "" {
		b.WriteString("\nHints: ")
		b.WriteString(policy.OneLine(hs))
	}
	if q.Drifted {
		b.WriteString("\nWarning: this tool's definition changed since it was first seen in this session; its earlier approval no longer applies and the hints it claims are not trusted until you approve it.")
	}
	switch {
	case d.Prompt != nil && d.Prompt.Incomplete != "":
		b.WriteString("\nThis approval cannot be remembered: the prompt cannot show everything it decides on (")
		b.WriteString(policy.OneLine(d.Prompt.Incomplete))
		b.WriteString("), so it applies to this call only.")
	case q.Scope() != "":
		b.WriteString("\nThis approval can be remembered only for calls with ")
		b.WriteString(policy.OneLine(q.Scope()))
		b.WriteString(" (this tool, this exact definition, this session); any other call is asked again.")
	case !d.Rememberable:
		b.WriteString("\nThis approval cannot be remembered: it applies to this call only.")
	}
	v := policy.ViewArguments(q.Arguments, d.Flagged)
	b.WriteString("\n")
	b.WriteString(v.Text())
	return b.String()
}

func reasons(d *policy.Decision) string {
	if d.Prompt != nil && d.Prompt.Message != "" {
		return d.Prompt.Message
	}
	msgs := make([]string, 0, len(d.Reasons))
	for _, r := range d.Reasons {
		msgs = append(msgs, r.Message)
	}
	return strings.Join(msgs, "; ")
}

// Scope describes what the scoped option remembers ("path under
// /repo/docs/**"), as every channel shows it, or "" when the question does
// not offer it.
func (q *Question) Scope() string {
	if !slices.Contains(q.Options, policy.OptionAllowSessionScoped) || q.Decision.Prompt == nil {
		return ""
	}
	return q.Decision.Prompt.Scope
}

// title is how the form labels an option. The scoped option names its
// scopes ("Allow for this session for path under /repo/docs/**"), so the
// human sees what a later call must match to run unasked.
func (q *Question) title(o string) string {
	if o == policy.OptionAllowSessionScoped && q.Scope() != "" {
		return optionTitles[o] + " " + policy.OneLine(q.Scope())
	}
	return optionTitles[o]
}

// Params renders the question as a form-mode elicitation request for a
// client of the current protocol (ParamsFor).
func (q *Question) Params() mcp.ElicitationParams { return q.ParamsFor("") }

// ParamsFor renders the question as a form-mode elicitation request for a
// client that negotiated protocolVersion ("": unknown, taken as current):
// the message and one required string property, "decision", whose values
// are the options with their titles.
//
// One shape per version, never both in one field: from 2025-11-25 a
// titled oneOf of {const, title}; before it, enum with the titles in
// enumNames (2025-06-18, deprecated since). The official TypeScript SDK
// validates the request against a union whose first match wins and drops
// what that shape does not name, so a field carrying both reached its
// handler as enum and enumNames alone, without the oneOf.
func (q *Question) ParamsFor(protocolVersion string) mcp.ElicitationParams {
	field := map[string]any{
		"type":        "string",
		"title":       "Decision",
		"description": "Approve or deny this tool call.",
	}
	if legacyEnumForm(protocolVersion) {
		names := make([]string, 0, len(q.Options))
		for _, o := range q.Options {
			names = append(names, q.title(o))
		}
		field["enum"], field["enumNames"] = q.Options, names
	} else {
		oneOf := make([]map[string]string, 0, len(q.Options))
		for _, o := range q.Options {
			oneOf = append(oneOf, map[string]string{"const": o, "title": q.title(o)})
		}
		field["oneOf"] = oneOf
	}
	return mcp.ElicitationParams{
		Message: q.Message(),
		RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{Field: field},
			"required":   []string{Field},
		},
	}
}

// legacyEnumForm reports a protocol version from before titled oneOf
// enums (2025-11-25). Versions are dates, so they compare as strings;
// elicitation itself came in 2025-06-18.
func legacyEnumForm(protocolVersion string) bool {
	return protocolVersion != "" && protocolVersion < "2025-11-25"
}

// Elicited reads the option the human chose from an elicitation result
// (Answer); no result at all is a deny.
func (q *Question) Elicited(r *mcp.ElicitationResult) (string, error) {
	if r == nil {
		return policy.OptionDeny, errors.New("no answer")
	}
	return q.Answer(string(r.Action), r.Content)
}

// The elicitation result's actions (MCP's ElicitationResponseAction).
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// Answer reads the human's answer to the question: an elicitation
// result's action and content. It returns the chosen option, which is
// OptionDeny for a decline or a cancel. An answer outside the options
// offered is an error: the client did not show this question. An accept
// without a decision counts as allow once, the narrowest allow, for
// clients that render a form as a bare confirm button.
func (q *Question) Answer(action string, content any) (string, error) {
	switch action {
	case ActionAccept:
	case ActionDecline, ActionCancel:
		return policy.OptionDeny, nil
	default:
		return policy.OptionDeny, fmt.Errorf("unknown elicitation action %q", action)
	}
	choice := ""
	switch c := content.(type) {
	case nil:
	case map[string]any:
		if v, ok := c[Field]; ok {
			s, isString := v.(string)
			if !isString {
				return policy.OptionDeny, fmt.Errorf("%q must be a string, got %T", Field, v)
			}
			choice = s
		}
	default:
		return policy.OptionDeny, fmt.Errorf("elicitation content must be an object, got %T", content)
	}
	if choice == "" {
		return policy.OptionAllowOnce, nil
	}
	if !slices.Contains(q.Options, choice) {
		return policy.OptionDeny, fmt.Errorf("answer %q was not offered (offered: %s)", choice, strings.Join(q.Options, ", "))
	}
	return choice, nil
}

// OptionTitle is how every channel labels option o of this question: the
// elicitation form, the inbox page and the webhook show the same words.
func (q *Question) OptionTitle(o string) string {
	if t := q.title(o); t != "" {
		return t
	}
	return o
}

// Label is how every channel labels option o when no question is at hand
// (the scoped option then names no scope); o itself when it is not an
// option.
func Label(o string) string {
	if t := optionTitles[o]; t != "" {
		return t
	}
	return o
}

// Title is the question's one-line title.
func (q *Question) Title() string {
	if d := q.Decision; d.Prompt != nil && d.Prompt.Title != "" {
		return policy.OneLine(d.Prompt.Title)
	}
	return "Allow " + policy.OneLine(q.Tool) + "?"
}

// Reasons are why the call needs approval, each on one line, as the
// prompt's "Why:" line words them.
func (q *Question) Reasons() []string {
	d := q.Decision
	if d.Prompt != nil && d.Prompt.Message != "" {
		return []string{policy.OneLine(d.Prompt.Message)}
	}
	out := make([]string, 0, len(d.Reasons))
	for _, r := range d.Reasons {
		out = append(out, policy.OneLine(r.Message))
	}
	return out
}
