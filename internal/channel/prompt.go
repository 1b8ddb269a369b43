package channel

import (
	"time"

	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// inboxAsk renders p as the inbox shows it: the prompt's title, reasons
// and argument view (every key, flagged first, long values cut, with the
// digest of the bytes forwarded), never the raw arguments.
func inboxAsk(p Prompt, expires time.Time) inbox.Ask {
	q := p.Question
	d := q.Decision
	view := policy.ViewArguments(q.Arguments, d.Flagged)
	a := inbox.Ask{
		Expires:   expires.UTC(),
		PID:       p.PID,
		Origin:    p.Origin,
		Session:   p.Session,
		Server:    d.Server,
		Tool:      d.Tool,
		App:       d.App,
		Title:     q.Title(),
		Reasons:   q.Reasons(),
		Hints:     inbox.Hints{Values: hintValues(&d.Hints), Trust: p.Trust, Drifted: q.Drifted},
		Arguments: view.Text(),
		Digest:    view.Digest,
	}
	if a.Tool == "" {
		a.Tool = q.Tool
	}
	for _, o := range q.Options {
		a.Options = append(a.Options, inbox.Option{ID: o, Title: q.OptionTitle(o)})
	}
	a.Scope = q.Scope()
	return a
}

// hintValues lists the set hints by name.
func hintValues(s *hints.Set) map[string]bool {
	out := map[string]bool{}
	for h := hints.Hint(0); h < hints.Count; h++ {
		switch s.Get(h) {
		case hints.True:
			out[h.Name()] = true
		case hints.False:
			out[h.Name()] = false
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
