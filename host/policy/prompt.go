package policy

import "encoding/json"

// prompt is what an ask shows. A prompt that cannot show what it decides
// on (ArgumentsView.Incomplete) offers allow_once and deny only, and the
// decision stops being rememberable, so that no answer to it can approve
// later calls the human never saw. An ask whose plugins proposed scopes
// offers allow_session_scoped instead of the unscoped options. p, and room
// for its text, are where to build it: the decision's own memory
// (decision_mem.go).
func (s *state) prompt(d *Decision, args json.RawMessage, p *Prompt, room promptRoom) *Prompt {
	title, msg := joinPrompt(room, s.tool.Title, d.Tool, d.Server, d.Reasons)
	*p = Prompt{Title: title, Message: msg, Hints: d.Hints}
	if why := argumentsIncomplete(args, d.Flagged); why != "" {
		p.Incomplete = why
		d.Rememberable = false
	}
	switch {
	case d.Rememberable:
		p.Options = optionsRememberable
	case p.Incomplete == "" && d.scopable():
		// Every ask that forbade remembering proposed scopes covering its
		// arguments: offer remembering inside them (scope_remember.go).
		d.offerScopes()
		p.Options = optionsScoped
		p.Scope = DescribeScopes(d.Scopes)
	default:
		p.Options = optionsOnce
	}
	return p
}

var (
	optionsRememberable = []string{OptionAllowOnce, OptionAllowSession, OptionAlways, OptionDeny}
	optionsOnce         = []string{OptionAllowOnce, OptionDeny}
	optionsScoped       = []string{OptionAllowOnce, OptionAllowSessionScoped, OptionDeny}
)
