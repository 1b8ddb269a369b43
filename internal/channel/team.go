package channel

import (
	"context"
	"fmt"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/session"
)

// TeamInbox is an approval inbox shared by every replica of a team
// gateway (toolwarden serve over a shared store): an ask posted by one
// replica is shown on every replica's /inbox page to whoever may answer
// it, and the first answer, from any replica, wins. When a Runner has one,
// its inbox channel posts there instead of the local rendezvous directory.
type TeamInbox interface {
	// Post publishes a (its ID is minted by the inbox) with whose approval
	// counts, one list per level (policy.Decision.ApproverLevels): none
	// means only the asker may answer.
	Post(ctx context.Context, a inbox.Ask, approvers [][]string) (TeamPending, error)
}

// TeamPending is an ask posted to a TeamInbox.
type TeamPending interface {
	ID() string
	// Wait blocks until the ask is answered, ctx ends (ctx.Err()), the
	// ask expires (inbox.ErrExpired) or is withdrawn (inbox.ErrWithdrawn).
	Wait(ctx context.Context) (TeamAnswer, error)
	// Close withdraws the ask (idempotent): no answer counts after it.
	Close() error
}

// TeamAnswer is the first answer a team inbox recorded for an ask.
type TeamAnswer struct {
	Option string
	// By is the principal who answered, as the answering replica
	// authenticated them, and their groups then (whoever applies the
	// answer checks them against the rules in force).
	By       string
	ByGroups []string
	// Scope is whose calls an "always" answer covers; zero for the
	// other options.
	Scope session.GrantScope
}

// postedAsk is an ask the Runner posted to an inbox, local or team.
type postedAsk interface {
	ID() string
	Close() error
	answer(ctx context.Context) (Answer, error)
}

// localPending is an ask in the local rendezvous directory.
type localPending struct{ *inbox.Pending }

func (p localPending) answer(ctx context.Context) (Answer, error) {
	ans, err := p.Wait(ctx)
	return Answer{Option: ans.Option, Channel: Inbox, By: ans.Channel}, err
}

// teamPending is an ask in a team inbox: its answer names the approver.
type teamPending struct{ TeamPending }

func (p teamPending) answer(ctx context.Context) (Answer, error) {
	ans, err := p.Wait(ctx)
	if err != nil {
		return Answer{}, err
	}
	return Answer{Option: ans.Option, Channel: Inbox, By: ans.By, Team: &ans}, nil
}

// postTeam puts the ask in the Runner's team inbox; a failure is logged
// and recorded, as a local post's is.
func (a *asking) postTeam(ctx context.Context, expires time.Time) (postedAsk, error) {
	tp, err := a.r.Team.Post(ctx, inboxAsk(a.p, expires), a.d.ApproverLevels())
	if err != nil {
		err = fmt.Errorf("team inbox: %w", err)
		a.r.log().Warn("cannot post the ask to the team inbox", "server", a.d.Server, "tool", a.d.Tool, "err", err)
		a.rec(audit.Ask{Channel: Inbox, Outcome: "failed", Error: err.Error()})
		return nil, err
	}
	a.rec(audit.Ask{Ask: tp.ID(), Channel: Inbox, Outcome: "posted"})
	a.team = &teamPending{tp}
	return a.team, nil
}

// TeamWithdrawer is a TeamPending that can tell, as it withdraws its ask,
// whether the ask was answered first: then answer is that answer, and the
// withdrawal did nothing. The store decides which came first.
type TeamWithdrawer interface {
	Withdraw(ctx context.Context) (answer *TeamAnswer, err error)
}

// settleTimeout bounds the withdrawal settle makes before it accepts
// another channel's answer.
const settleTimeout = 5 * time.Second

// settle makes the first answer win across channels when one of them is a
// team inbox: another channel's answer (the client's prompt) counts only
// if the team's ask can still be withdrawn. If an approver's answer was
// recorded in the store first, that answer is the answer: the approver was
// told it counted, and it does. A withdrawal that fails leaves the other
// channel's answer standing (the ask then expires unanswered).
func (a *asking) settle(res channelResult) channelResult {
	if res.channel == Inbox || a.team == nil {
		return res
	}
	w, ok := a.team.TeamPending.(TeamWithdrawer)
	if !ok {
		return res
	}
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	first, err := w.Withdraw(ctx)
	switch {
	case err != nil:
		a.r.log().Warn("cannot withdraw the team inbox's ask; the other channel's answer stands", "server", a.d.Server, "tool", a.d.Tool, "err", err)
		return res
	case first == nil:
		return res
	}
	a.rec(audit.Ask{Ask: a.id, Channel: res.channel, Outcome: "withdrawn", Error: "the team inbox was answered first"})
	delete(a.waiting, res.channel)
	a.waiting[Inbox] = true // answered() records the other channels as withdrawn
	return channelResult{Inbox, Answer{Option: first.Option, Channel: Inbox, By: first.By, Team: first}, nil}
}
