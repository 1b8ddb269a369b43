package channel

import (
	"context"
	"errors"
	"fmt"
	"github.com/toolwarden/toolwarden/internal/audit"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// Channel names, as answers and audit records give them.
const (
	Elicitation = "elicitation"
	Inbox       = "inbox"
	Webhook     = "webhook"
	None        = "none"
)

// Prompt is one ask, as every channel shows it.
type Prompt struct {
	// Origin is the asking process's kind: "wrap", "proxy", "hook", "sdk".
	Origin string
	// PID is the asking process, when it is not this one: the hook a warm
	// process decides an event for (0: this process).
	PID     int
	Session string
	// Question is the approval question: the decision, the arguments and
	// the options offered.
	Question *Question
	// Trust is the server's trust level, shown with the hints ("" unknown).
	Trust string
	// Timeout is how long the call waits for an answer.
	Timeout time.Duration
}

// Elicit asks through MCP elicitation (or the agent's own prompt) and
// returns the option chosen. It must return when ctx ends.
type Elicit func(ctx context.Context) (option string, err error)

// Answer is the first answer an ask got.
type Answer struct {
	// Option is one of the question's options.
	Option string
	// Channel is the channel that answered: Elicitation or Inbox.
	Channel string
	// By is where an inbox answer was given ("inbox", "webhook-link").
	By string
	// Ended is Declined or Cancelled when the client ended the prompt
	// without choosing an option (Option is then deny); "" otherwise.
	Ended string
	// Team is the team inbox's answer (who answered, for whom an
	// "always" holds), when the team inbox answered (By is then the
	// approver's principal).
	Team *TeamAnswer
}

// Outcomes of a prompt the client ended without choosing an option (MCP's
// decline and cancel). The ask ends denied, but the audit and the webhook
// say which, never "answered": a non-interactive client does it by
// itself (claude -p cancels every prompt, codex exec declines it), and
// whoever reads them must tell that from a person's Deny.
const (
	Declined  = "declined"
	Cancelled = "cancelled"
)

// EndedError is what an Elicit returns when the client ended the prompt
// without choosing an option; Outcome is Declined or Cancelled. It is not
// a failure: the ask ends with it, denied, as with an answer.
type EndedError struct{ Outcome string }

func (e *EndedError) Error() string { return "the client " + e.Outcome + " the approval prompt" }

// Runner asks over the channels of one setting. Its zero value (besides
// Setting) uses the user's inbox directory, the process environment and
// no webhook. A Runner may run several asks at once.
type Runner struct {
	Setting config.ChannelSetting
	// Webhook, when set, is told of every ask (and, if it wants them, of
	// answers), whatever the channel, except "none".
	Webhook *config.Webhook
	// Dir finds the inbox's rendezvous directory; nil: inbox.Dir.
	Dir func() (string, error)
	// Getenv reads the webhook's secret; nil: os.Getenv.
	Getenv func(string) string
	// HTTP posts to the webhook; nil: a client that follows no redirect.
	HTTP *http.Client
	// Log gets failures of the channels; nil: discarded.
	Log *slog.Logger
	// Record audits each channel's part in an ask; nil: nothing.
	Record func(audit.Ask)
	// Team, when set, takes the inbox channel's asks instead of the
	// local rendezvous directory (team.go): serve's shared inbox.
	Team TeamInbox

	notices  sync.WaitGroup
	inFlight atomic.Int32
	// abandon ends the webhook posts still in flight when FlushWithin's
	// bound is reached.
	abandonOnce sync.Once
	abandonCtx  context.Context
	abandon     context.CancelFunc
}

// Errors Ask returns (test with errors.Is, or errors.As for *RefusedError).
var (
	// ErrTimeout: no channel answered within the timeout.
	ErrTimeout = errors.New("no answer in time")
	// ErrNoChannel: no channel can take the ask (approval_channel =
	// "elicitation" and the client cannot elicit); the caller explains.
	ErrNoChannel = errors.New("no approval channel can reach a human")
)

// RefusedError is the answer of approval_channel = "none": every ask is
// a deny, and Setting says where that was set.
type RefusedError struct {
	Setting config.ChannelSetting
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s sends asks to nobody, so every ask is denied", e.Setting.Where())
}

// Code is the reason code of a refusal.
const Code = "no_approval_channel"

// Refusal is the reason a call is denied under approval_channel = "none",
// for the message a caller shows (followed by the reason code, Code):
// what, where it was set, what to do.
func Refusal(s config.ChannelSetting) string {
	return fmt.Sprintf("it needs approval, and %s sends asks to nobody; to be asked, set approval_channel to \"elicitation\", \"inbox\" or \"both\" there", s.Where())
}

// Uses reports whether an ask with this setting goes anywhere but today's
// plain elicitation: the inbox, a webhook, or nowhere (none). When it does
// not, callers keep their own elicitation path unchanged.
func (r *Runner) Uses() bool {
	return r.Setting.Effective() != config.ChannelElicitation || r.Webhook != nil
}

// Ask puts p to the configured channels and returns the first answer. An
// elicit of nil means the client cannot elicit: the inbox is waited on
// instead when the channel includes it. An elicit that returns an
// *EndedError ends the ask denied, with Answer.Ended set. Errors:
// *RefusedError for "none", ErrNoChannel when nothing can take the ask,
// ErrTimeout, ctx.Err(), or the last channel's failure when every channel
// failed.
func (r *Runner) Ask(ctx context.Context, p Prompt, elicit Elicit) (Answer, error) {
	a := &asking{r: r, p: p, d: p.Question.Decision}
	ch := r.Setting.Effective()
	if ch == config.ChannelNone {
		a.rec(audit.Ask{Channel: None, Outcome: "refused", Error: r.Setting.Where()})
		return Answer{}, &RefusedError{Setting: r.Setting}
	}
	useElicit := ch.Elicits() && elicit != nil
	if !useElicit && !ch.Inbox() {
		return Answer{}, ErrNoChannel
	}
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	expires := time.Now().Add(p.Timeout)

	var pend postedAsk
	dir := ""
	if ch.Inbox() {
		var err error
		if pend, dir, err = a.post(ctx, expires); err != nil && !useElicit {
			return Answer{}, fmt.Errorf("cannot post the ask to the approval inbox: %w", err)
		}
		if pend != nil {
			// Withdrawn whatever happens: answered elsewhere, timed out,
			// or the caller gone.
			defer pend.Close()
			a.id = pend.ID()
		}
	}
	var waitsOn []string
	if useElicit {
		waitsOn = append(waitsOn, Elicitation)
	}
	if pend != nil {
		waitsOn = append(waitsOn, Inbox)
	}
	a.id = r.notify(p, dir, a.id, expires, waitsOn)
	return a.first(ctx, cancel, a.wait(ctx, pend, elicit, useElicit))
}

// asking is one Ask under way: what it records, under which inbox id, and
// which channels it still waits on.
type asking struct {
	r       *Runner
	p       Prompt
	d       *policy.Decision
	id      string
	waiting map[string]bool
	// team is the ask posted to the team inbox, when it was (team.go).
	team *teamPending
}

// channelResult is one channel's answer, or why it gave none.
type channelResult struct {
	channel string
	ans     Answer
	err     error
}

// rec records a's part of the ask in the audit log, if the Runner has one.
func (a *asking) rec(e audit.Ask) {
	e.Server, e.Tool, e.App = a.d.Server, a.d.Tool, a.d.App
	if a.r.Record != nil {
		a.r.Record(e)
	}
}

// post puts the ask in the inbox (the team's, when the Runner has one); a
// failure is logged and recorded.
func (a *asking) post(ctx context.Context, expires time.Time) (postedAsk, string, error) {
	if a.r.Team != nil {
		p, err := a.postTeam(ctx, expires)
		return p, "", err
	}
	dir, err := a.r.dir()
	var pend *inbox.Pending
	if err == nil {
		pend, err = inbox.Post(dir, inboxAsk(a.p, expires))
	}
	if err != nil {
		a.r.log().Warn("cannot post the ask to the approval inbox", "server", a.d.Server, "tool", a.d.Tool, "err", err)
		a.rec(audit.Ask{Channel: Inbox, Outcome: "failed", Error: err.Error()})
		return nil, dir, err
	}
	a.rec(audit.Ask{Ask: pend.ID(), Channel: Inbox, Outcome: "posted"})
	return localPending{pend}, dir, nil
}

// wait starts waiting on each channel that took the ask; their answers
// arrive on the channel it returns, which never blocks a loser after Ask
// returned.
func (a *asking) wait(ctx context.Context, pend postedAsk, elicit Elicit, useElicit bool) <-chan channelResult {
	results := make(chan channelResult, 2)
	a.waiting = map[string]bool{}
	if pend != nil {
		a.waiting[Inbox] = true
		go func() {
			ans, err := pend.answer(ctx)
			results <- channelResult{Inbox, ans, err}
		}()
	}
	if useElicit {
		a.waiting[Elicitation] = true
		go func() {
			o, err := elicit(ctx)
			results <- channelResult{Elicitation, Answer{Option: o, Channel: Elicitation}, err}
		}()
	}
	return results
}

// first returns the first answer offered by a channel; a channel that
// fails is recorded and the others are waited on. When the time runs out
// the ask has expired; when every channel failed, the last failure is the
// answer.
func (a *asking) first(ctx context.Context, cancel context.CancelFunc, results <-chan channelResult) (Answer, error) {
	var last error
	for len(a.waiting) > 0 {
		res := <-results
		var end *EndedError
		if errors.As(res.err, &end) {
			res.ans, res.err = Answer{Option: policy.OptionDeny, Channel: res.channel, Ended: end.Outcome}, nil
		}
		if res.err == nil && (res.ans.Ended != "" || slices.Contains(a.p.Question.Options, res.ans.Option)) {
			res = a.settle(res) // team.go: the team inbox may have been answered first
			cancel()
			return a.answered(res), nil
		}
		if ctx.Err() != nil || errors.Is(res.err, inbox.ErrExpired) {
			// The inbox's own clock ran out with ours.
			return a.expired(ctx)
		}
		delete(a.waiting, res.channel)
		err := res.err
		if err == nil {
			err = fmt.Errorf("answer %q was not offered", res.ans.Option)
		}
		a.r.log().Warn("an approval channel failed; waiting on the others", "channel", res.channel, "server", a.d.Server, "tool", a.d.Tool, "err", err)
		a.rec(audit.Ask{Ask: a.id, Channel: res.channel, Outcome: "failed", Error: err.Error()})
		last = err
	}
	a.r.notifyAnswer(a.p, a.id, "", "failed", "")
	return Answer{}, last
}

// answered records res as the answer, and the other channels as withdrawn.
func (a *asking) answered(res channelResult) Answer {
	delete(a.waiting, res.channel)
	outcome, option := "answered", res.ans.Option
	if res.ans.Ended != "" {
		outcome, option = res.ans.Ended, "" // no option was chosen
	}
	a.rec(audit.Ask{Ask: a.id, Channel: res.channel, Outcome: outcome, Option: option, By: res.ans.By})
	for other := range a.waiting {
		a.rec(audit.Ask{Ask: a.id, Channel: other, Outcome: "withdrawn"})
	}
	a.r.notifyAnswer(a.p, a.id, res.channel, outcome, option)
	return res.ans
}

// expired records the channels still waited on as expired.
func (a *asking) expired(ctx context.Context) (Answer, error) {
	err := ctx.Err()
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		err = ErrTimeout
	}
	for other := range a.waiting {
		a.rec(audit.Ask{Ask: a.id, Channel: other, Outcome: "expired", Error: err.Error()})
	}
	a.r.notifyAnswer(a.p, a.id, "", "expired", "")
	return Answer{}, err
}

// Tell posts the "ask" event of an ask handed to a channel the Runner
// does not wait on (the agent's own dialog, for a hook under
// "elicitation"; a 2026-07-28 client's input request, in wrap and proxy),
// so that the webhook hears of every ask; channels names where it is
// asked, none when no channel can take it (a client that cannot elicit).
// It returns at once; nothing is posted under "none" or without a webhook.
func (r *Runner) Tell(p Prompt, channels ...string) {
	if r.Setting.Effective() == config.ChannelNone || r.Webhook == nil {
		return
	}
	var expires time.Time // unknown: the channel keeps its own clock
	if p.Timeout > 0 {
		expires = time.Now().Add(p.Timeout)
	}
	r.notify(p, "", "", expires, channels)
}

// Flush waits for the webhook posts in flight, each bounded by the
// webhook's timeout (and one retry).
func (r *Runner) Flush() { r.notices.Wait() }

// FlushWithin waits for the webhook posts in flight for at most d, then
// abandons those still running (each is logged and audited as failed) and
// returns how many it abandoned. A short-lived process (a hook) calls it
// last, before it answers: its answer must not wait on a slow receiver.
// Once it has abandoned posts, later posts of r are abandoned at once.
func (r *Runner) FlushWithin(d time.Duration) (abandoned int) {
	done := make(chan struct{})
	go func() { r.notices.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return 0
	case <-t.C:
	}
	r.abandonCtxOnce()
	n := int(r.inFlight.Load())
	r.abandon()
	<-done // cancelled posts return at once
	return n
}

// abandonCtxOnce makes the context every post of r runs under.
func (r *Runner) abandonCtxOnce() context.Context {
	r.abandonOnce.Do(func() { r.abandonCtx, r.abandon = context.WithCancel(context.Background()) })
	return r.abandonCtx
}

func (r *Runner) dir() (string, error) {
	if r.Dir != nil {
		return r.Dir()
	}
	return inbox.Dir()
}

func (r *Runner) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return discard
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func (r *Runner) getenv(k string) string {
	if r.Getenv != nil {
		return r.Getenv(k)
	}
	return os.Getenv(k)
}
