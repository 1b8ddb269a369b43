package channel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// memTeam is a team inbox held in memory: the Runner's side of the
// contract only (internal/store's asks are tested on both engines, and
// serve's team inbox through the real binary).
type memTeam struct {
	mu      sync.Mutex
	posted  []inbox.Ask
	levels  [][][]string
	answers chan TeamAnswer
	closed  chan string
	postErr error
	// first is the answer the store recorded before a withdrawal could
	// take the ask (Withdraw returns it); nil: withdrawals succeed.
	first *TeamAnswer
}

func newMemTeam() *memTeam {
	return &memTeam{answers: make(chan TeamAnswer, 1), closed: make(chan string, 4)}
}

func (m *memTeam) Post(_ context.Context, a inbox.Ask, approvers [][]string) (TeamPending, error) {
	if m.postErr != nil {
		return nil, m.postErr
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a.ID = "team-ask-1"
	m.posted = append(m.posted, a)
	m.levels = append(m.levels, approvers)
	return &memPending{m: m, id: a.ID, done: make(chan struct{})}, nil
}

type memPending struct {
	m    *memTeam
	id   string
	once sync.Once
	done chan struct{}
}

func (p *memPending) ID() string { return p.id }

func (p *memPending) Wait(ctx context.Context) (TeamAnswer, error) {
	select {
	case a := <-p.m.answers:
		return a, nil
	case <-p.done:
		return TeamAnswer{}, inbox.ErrWithdrawn
	case <-ctx.Done():
		return TeamAnswer{}, ctx.Err()
	}
}

func (p *memPending) Withdraw(context.Context) (*TeamAnswer, error) {
	p.Close()
	return p.m.first, nil
}

func (p *memPending) Close() error {
	p.once.Do(func() { close(p.done); p.m.closed <- p.id })
	return nil
}

// With a team inbox, an ask of the inbox channel goes there (with the
// decision's approver levels), never to the local rendezvous directory,
// and the team's answer is the answer: who gave it, and for whom an
// "always" holds, come back with it, and the ask is withdrawn after.
func TestWithATeamInboxAnAskGoesToTheTeamAndItsAnswerSaysWhoGaveIt(t *testing.T) {
	t.Parallel()
	dir, rec, team := rendezvous(t), &records{}, newMemTeam()
	r := runner(dir, config.ChannelInbox, rec)
	r.Team = team
	p := prompt(time.Hour)
	p.Question.Decision.Approvers = []string{"group:leads"}
	p.Question.Options = []string{policy.OptionAllowOnce, policy.OptionAlways, policy.OptionDeny}
	done := ask(r, p, nil)
	want := TeamAnswer{Option: policy.OptionAlways, By: "lead", ByGroups: []string{"leads"}, Scope: session.GrantScope{Kind: session.ScopeTeam}}
	team.answers <- want
	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	if out.ans.Option != policy.OptionAlways || out.ans.Channel != Inbox || out.ans.By != "lead" || out.ans.Team == nil ||
		out.ans.Team.Scope != want.Scope || !slices.Equal(out.ans.Team.ByGroups, want.ByGroups) {
		t.Fatalf("answer %+v (team %+v)", out.ans, out.ans.Team)
	}
	if len(team.posted) != 1 || team.posted[0].Tool != "write_file" || team.posted[0].Session != "s1" || !team.posted[0].Offers(policy.OptionAlways) {
		t.Fatalf("posted %+v", team.posted)
	}
	if len(team.levels[0]) != 1 || !slices.Equal(team.levels[0][0], []string{"group:leads"}) {
		t.Errorf("approver levels posted %v, want [[group:leads]]", team.levels[0])
	}
	if id := <-team.closed; id != "team-ask-1" {
		t.Errorf("withdrew %q", id)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "asks")); len(entries) != 0 {
		t.Errorf("the local rendezvous directory holds %d asks", len(entries))
	}
	if !rec.has(Inbox, "posted", "") || !rec.has(Inbox, "answered", policy.OptionAlways) {
		t.Errorf("audit %s", rec)
	}
}

// Under "both", the first answer wins across the client's prompt and the
// team inbox: an elicitation answer withdraws the team's ask, so no later
// answer there counts.
func TestAnElicitationAnswerWithdrawsTheTeamAsk(t *testing.T) {
	t.Parallel()
	rec, team := &records{}, newMemTeam()
	r := runner(rendezvous(t), config.ChannelBoth, rec)
	r.Team = team
	out := <-ask(r, prompt(time.Hour), func(context.Context) (string, error) { return policy.OptionAllowOnce, nil })
	if out.err != nil || out.ans.Channel != Elicitation || out.ans.Team != nil {
		t.Fatalf("answer %+v, %v", out.ans, out.err)
	}
	select {
	case <-team.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the team ask was not withdrawn")
	}
	if !rec.has(Inbox, "withdrawn", "") {
		t.Errorf("audit %s", rec)
	}
}

// A team inbox that cannot take the ask (the store is down) fails that
// channel only: the client's prompt still asks, and with no other
// channel the error says the team inbox failed.
func TestATeamInboxThatCannotTakeTheAskFailsThatChannelOnly(t *testing.T) {
	t.Parallel()
	down := errors.New("store postgres://x: connection refused")
	for _, tc := range []struct {
		name   string
		ch     config.Channel
		elicit Elicit
	}{
		{"both: elicitation answers", config.ChannelBoth, func(context.Context) (string, error) { return policy.OptionDeny, nil }},
		{"inbox only: the ask fails", config.ChannelInbox, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec, team := &records{}, newMemTeam()
			team.postErr = down
			r := runner(rendezvous(t), tc.ch, rec)
			r.Team = team
			out := <-ask(r, prompt(time.Hour), tc.elicit)
			if tc.elicit != nil {
				if out.err != nil || out.ans.Option != policy.OptionDeny {
					t.Fatalf("answer %+v, %v", out.ans, out.err)
				}
			} else if !errors.Is(out.err, down) || !rec.has(Inbox, "failed", "") {
				t.Fatalf("error %v, audit %s", out.err, rec)
			}
		})
	}
}

// Under "both", the store says which answer came first: when an approver's
// answer was recorded in the team inbox before the client's prompt was
// answered, the approver's answer is the answer (they were told it
// counted), and the prompt's is recorded as withdrawn.
func TestAnAnswerTheTeamInboxRecordedFirstBeatsALaterPromptAnswer(t *testing.T) {
	t.Parallel()
	rec, team := &records{}, newMemTeam()
	team.first = &TeamAnswer{Option: policy.OptionDeny, By: "leo", ByGroups: []string{"leads"}}
	r := runner(rendezvous(t), config.ChannelBoth, rec)
	r.Team = team
	out := <-ask(r, prompt(time.Hour), func(context.Context) (string, error) { return policy.OptionAllowOnce, nil })
	if out.err != nil || out.ans.Channel != Inbox || out.ans.Option != policy.OptionDeny || out.ans.By != "leo" || out.ans.Team == nil {
		t.Fatalf("answer %+v, %v; want leo's deny from the team inbox", out.ans, out.err)
	}
	if !rec.has(Elicitation, "withdrawn", "") || !rec.has(Inbox, "answered", policy.OptionDeny) {
		t.Errorf("audit %s", rec)
	}
}
