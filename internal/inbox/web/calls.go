package web

import (
	"strings"

	"github.com/toolwarden/toolwarden/internal/audit"
)

// A call leaves several records in the audit log: its "check" (the
// policy's verdict), and when it was asked about, each channel's part
// ("channel": posted, answered, expired...), the scope an allow remembered
// ("approve"), and the result ("observe"). The page shows one row per
// call with how it ended, so foldCalls folds them together. Records carry
// no call id: an ask's later records go to the oldest open ask of the same
// session, server and tool, which is the one they belong to unless one
// session asks about the same tool twice at once (then the two rows may
// trade outcomes, never lose one).

// The outcomes a row ends with.
const (
	outcomeAllowed       = "allowed"         // by policy, or by a standing approval
	outcomeAllowedByUser = "allowed_by_user" // answered with an allow option
	outcomeDenied        = "denied"          // by policy
	outcomeDeniedByUser  = "denied_by_user"  // answered deny, or declined
	outcomeCancelled     = "cancelled"       // the prompt was closed without an answer
	outcomeExpired       = "expired"         // nobody answered in time
	outcomeRefused       = "refused"         // approval_channel = "none": nobody to ask
	outcomeCannotAsk     = "cannot_ask"      // the agent's hook cannot ask: denied
	outcomeFailed        = "failed"          // every channel failed
	outcomeAsked         = "asked"           // no answer recorded (yet)
	outcomeRevoked       = "revoked"         // a standing approval taken back
)

// callKey is what ties an ask's later records to its check.
type callKey struct{ session, server, tool string }

// folder holds the rows built so far and the asks still open.
type folder struct {
	rows []decision
	open map[callKey][]int // indexes into rows, oldest first
}

// foldCalls turns records, oldest first, into rows, oldest first, and
// counts the records that lack what their event needs.
func foldCalls(lines []auditLine) (rows []decision, malformed int) {
	f := &folder{rows: []decision{}, open: map[callKey][]int{}}
	for _, l := range lines {
		if !f.add(l) {
			malformed++
		}
	}
	return f.rows, malformed
}

// add folds one record in; false when it is a malformed record of an
// event the page reads.
func (f *folder) add(l auditLine) bool {
	d := l.Decision
	key := callKey{l.Session, d.Server, d.Tool}
	switch l.Event {
	case "check":
		if d.Server == "" || d.Tool == "" || d.Decision == "" {
			return false
		}
		f.check(l)
	case "channel":
		if i, ok := f.oldest(key); ok {
			f.channel(i, l)
		}
	case "approve":
		// An allow remembered with no channel record before it
		// (check --approve, a library caller): the scope is the answer.
		if i, ok := f.oldest(key); ok && f.rows[i].By == "" {
			f.end(i, outcomeAllowedByUser, l.Scope, "")
		}
	case "observe":
		// The call ran. An ask no channel of ours took was put to the
		// agent's own dialog (a hook): running means the user allowed it.
		if i, ok := f.oldest(key); ok && f.rows[i].By == "" {
			f.end(i, outcomeAllowedByUser, "", "agent")
		}
	case "revoke":
		if d.Server == "" && !d.All {
			return false
		}
		f.revoke(l)
	}
	return true
}

func (f *folder) check(l auditLine) {
	d := l.Decision
	row := decision{Time: l.Time, Event: "call", Session: l.Session, Server: d.Server, Tool: d.Tool, App: d.App, Verdict: d.Decision}
	if len(d.Reasons) > 0 {
		row.Reason = d.Reasons[0].Message
	}
	f.rows = append(f.rows, row)
	i := len(f.rows) - 1
	switch d.Decision {
	case "allow":
		f.settle(i, outcomeAllowed, "")
	case "deny":
		f.settle(i, outcomeDenied, "")
	default:
		f.settle(i, outcomeAsked, "")
		k := callKey{l.Session, d.Server, d.Tool}
		f.open[k] = append(f.open[k], i)
	}
}

// channel applies one channel's part in the ask of row i.
func (f *folder) channel(i int, l auditLine) {
	a := l.Decision
	by := a.By
	if by == "" {
		by = a.Channel
	}
	switch a.Outcome {
	case "answered":
		if a.Option == "deny" {
			f.end(i, outcomeDeniedByUser, "", by)
		} else {
			f.end(i, outcomeAllowedByUser, a.Option, by)
		}
	case "declined":
		f.end(i, outcomeDeniedByUser, "", by)
	case "cancelled":
		f.end(i, outcomeCancelled, "", by)
	case "expired":
		f.end(i, outcomeExpired, "", "")
	case "refused":
		if a.Channel == audit.ChannelAgent {
			f.end(i, outcomeCannotAsk, "", "")
		} else {
			f.end(i, outcomeRefused, "", "")
		}
	case "failed":
		// Another channel may still answer; if none does, this stands.
		f.settle(i, outcomeFailed, "")
		f.rows[i].By = a.Channel
	default: // posted, sent, withdrawn: still waiting
		if f.rows[i].By == "" {
			f.rows[i].By = a.Channel
		}
	}
}

// oldest is the oldest open ask of key.
func (f *folder) oldest(k callKey) (int, bool) {
	q := f.open[k]
	if len(q) == 0 {
		return 0, false
	}
	return q[0], true
}

// end gives row i its final outcome and closes its ask.
func (f *folder) end(i int, outcome, option, by string) {
	f.settle(i, outcome, option)
	if by != "" {
		f.rows[i].By = by
	}
	k := callKey{f.rows[i].Session, f.rows[i].Server, f.rows[i].Tool}
	if q := f.open[k]; len(q) > 0 && q[0] == i {
		f.open[k] = q[1:]
	}
}

// settle sets row i's outcome, its kind and its words.
func (f *folder) settle(i int, outcome, option string) {
	r := &f.rows[i]
	r.Outcome = outcome
	r.Decision, r.Label = describeOutcome(outcome, option)
}

func (f *folder) revoke(l auditLine) {
	d := l.Decision
	row := decision{Time: l.Time, Event: "revoke", Session: l.Session, Server: d.Server, Tool: d.Tool, App: d.App, By: d.By, Outcome: outcomeRevoked, Decision: "revoked"}
	row.Label = "always approval revoked"
	if d.All {
		row.Server, row.Tool = "*", "*"
		row.Label = "every always approval revoked"
	}
	row.Reason = "revoked from " + d.File
	if d.By != "" {
		row.Reason += " by " + revokerWords[d.By]
	}
	f.rows = append(f.rows, row)
}

var revokerWords = map[string]string{"cli": "toolwarden approvals", "inbox": "the inbox page"}

// describeOutcome is a row's kind (for the chart's colours) and the words
// the page shows for an outcome; option is the allow option a user chose.
func describeOutcome(outcome, option string) (kind, words string) {
	switch outcome {
	case outcomeAllowed:
		return "allow", "allowed"
	case outcomeAllowedByUser:
		return "approved", "allowed " + allowWords(option) + "by the user"
	case outcomeDenied:
		return "deny", "denied by policy"
	case outcomeDeniedByUser:
		return "deny", "denied by the user"
	case outcomeCancelled:
		return "deny", "denied: the prompt was closed unanswered"
	case outcomeExpired:
		return "expired", "expired: no answer in time"
	case outcomeRefused:
		return "deny", "denied: no approval channel (approval_channel = \"none\")"
	case outcomeCannotAsk:
		return "deny", "denied: this agent cannot ask (approval_channel = \"inbox\" asks in the inbox)"
	case outcomeFailed:
		return "deny", "denied: the approval channel failed"
	}
	return "ask", "asked: no answer recorded"
}

// allowWords says for how long an allow option (or an approve record's
// scope) allows: "once ", "for the session ", "always ".
func allowWords(option string) string {
	switch {
	case option == "allow_once" || option == "once":
		return "once "
	case option == "always":
		return "always "
	case strings.HasPrefix(option, "allow_session") || strings.HasPrefix(option, "session"):
		return "for the session "
	}
	return ""
}
