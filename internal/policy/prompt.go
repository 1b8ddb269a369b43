package policy

import (
	"encoding/json"
	"strings"
)

// prompt is what an ask shows. A prompt that cannot show what it decides
// on (ArgumentsView.Incomplete) offers allow_once and deny only, and the
// decision stops being rememberable, so that no answer to it can approve
// later calls the human never saw. An ask whose plugins proposed scopes
// offers allow_session_scoped instead of the unscoped options.
func (s *state) prompt(d *Decision, args json.RawMessage) *Prompt {
	p := &Prompt{Title: promptTitle(s.tool.Title, d.Tool, d.Server), Message: promptMessage(d.Reasons), Hints: d.Hints}
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

// promptTitle names the tool (and its title, when it has a different one)
// and the server.
func promptTitle(toolTitle, tool, server string) string {
	if toolTitle != "" && toolTitle != tool {
		return "Allow " + toolTitle + " (" + tool + ") on " + server + "?"
	}
	return "Allow " + tool + " on " + server + "?"
}

// promptMessage is the reasons, joined by "; ".
func promptMessage(reasons []Reason) string {
	var b strings.Builder
	for i := range reasons {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(reasons[i].Message)
	}
	return b.String()
}
