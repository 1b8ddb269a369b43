package approval

import "github.com/toolwarden/toolwarden/internal/policy"

// OptionTitle is how every channel labels option o of this question: the
// elicitation form, the inbox page and the webhook show the same words.
func (q *Question) OptionTitle(o string) string {
	if t := q.title(o); t != "" {
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
