package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// eachAskEngine runs f on each engine with two handles on one database:
// two replicas.
func eachAskEngine(t *testing.T, f func(t *testing.T, a, b *Store)) {
	forEachEngine(t, func(t *testing.T, url string) {
		f(t, openTest(t, url, Options{Poll: 50 * time.Millisecond, Replica: "replica-a"}),
			openTest(t, url, Options{Poll: 50 * time.Millisecond, Replica: "replica-b"}))
	})
}

func teamAsk(tool string, expires time.Time) inbox.Ask {
	return inbox.Ask{
		Origin: "serve", Session: "dana/s/1", Server: "deploy", Tool: tool, Arguments: `{"env": "prod"}`,
		Reasons: []string{"the tool may change or delete data"}, Expires: expires,
		Options: []inbox.Option{{ID: policy.OptionAllowOnce, Title: "Allow once"}, {ID: policy.OptionAlways, Title: "Always"}, {ID: policy.OptionDeny, Title: "Deny"}},
	}
}

var (
	lead   = session.Who{Principal: "lena", Groups: []string{"leads"}}
	lead2  = session.Who{Principal: "leo", Groups: []string{"leads", "ops"}}
	levels = [][]string{{"group:leads"}}
)

// The first answer to an ask is the one that counts: a second answer is
// refused, the stored answer keeps who gave it (with their groups) and
// whose calls an "always" covers, and the waiter gets exactly that.
func TestTheFirstAnswerToAnAskWinsAndALaterOneIsRefused(t *testing.T) {
	t.Parallel()
	eachAskEngine(t, func(t *testing.T, a, b *Store) {
		ctx := context.Background()
		posted, err := a.PostAsk(ctx, teamAsk("deploy_app", time.Now().Add(time.Hour)), "dana", levels)
		if err != nil {
			t.Fatal(err)
		}
		if len(posted.ID) != 32 {
			t.Fatalf("id %q", posted.ID)
		}
		team := session.GrantScope{Kind: session.ScopeTeam}
		if won, err := b.AnswerAsk(ctx, posted.ID, policy.OptionAlways, lead, team); err != nil || !won {
			t.Fatalf("the first answer: won %v, %v", won, err)
		}
		if won, err := a.AnswerAsk(ctx, posted.ID, policy.OptionDeny, lead2, session.GrantScope{}); err != nil || won {
			t.Fatalf("the second answer: won %v, %v", won, err)
		}
		got, err := a.WaitAsk(ctx, posted.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Option != policy.OptionAlways || got.By.Principal != "lena" || !slices.Equal(got.By.Groups, lead.Groups) || got.Scope != team {
			t.Fatalf("the answer waited for: %+v", got)
		}
		stored, err := b.GetAsk(ctx, posted.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Principal != "dana" || !slices.EqualFunc(stored.Approvers, levels, slices.Equal) || stored.Ask.Tool != "deploy_app" ||
			stored.Ask.Arguments != `{"env": "prod"}` || stored.State(time.Now()) != AskAnswered || stored.Replica != a.Replica() {
			t.Fatalf("stored %+v", stored)
		}
		// Withdrawing after the answer changes nothing: the answer stays.
		if withdrawn, err := a.WithdrawAsk(ctx, posted.ID); err != nil || withdrawn {
			t.Fatalf("withdrawing an answered ask: withdrawn %v, %v", withdrawn, err)
		}
		if again, _ := b.GetAsk(ctx, posted.ID); again.State(time.Now()) != AskAnswered || !again.Withdrawn.IsZero() {
			t.Fatalf("withdrawn after its answer: %+v", again)
		}
	})
}

// Two replicas' handles answering one ask at the same moment, many times
// over: exactly one answer wins each ask, and it is the stored one.
func TestTwoHandlesAnsweringOneAskAtOnceExactlyOneWins(t *testing.T) {
	t.Parallel()
	eachAskEngine(t, func(t *testing.T, a, b *Store) {
		ctx := context.Background()
		for round := range 20 {
			posted, err := a.PostAsk(ctx, teamAsk("deploy_app", time.Now().Add(time.Hour)), "dana", levels)
			if err != nil {
				t.Fatal(err)
			}
			type try struct {
				by  session.Who
				won bool
				err error
			}
			tries := make([]try, 6)
			var start, done sync.WaitGroup
			start.Add(1)
			for i := range tries {
				h, who := a, lead
				if i%2 == 1 {
					h, who = b, lead2
				}
				who.Principal = fmt.Sprintf("%s-%d", who.Principal, i)
				done.Add(1)
				go func() {
					defer done.Done()
					start.Wait()
					won, err := h.AnswerAsk(ctx, posted.ID, policy.OptionAllowOnce, who, session.GrantScope{})
					tries[i] = try{who, won, err}
				}()
			}
			start.Done()
			done.Wait()
			var winners []string
			for _, tr := range tries {
				if tr.err != nil {
					t.Fatalf("round %d: %v", round, tr.err)
				}
				if tr.won {
					winners = append(winners, tr.by.Principal)
				}
			}
			if len(winners) != 1 {
				t.Fatalf("round %d: winners %v, want exactly one", round, winners)
			}
			stored, err := b.GetAsk(ctx, posted.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.Answer == nil || stored.Answer.By.Principal != winners[0] {
				t.Fatalf("round %d: stored answer %+v, winner %s", round, stored.Answer, winners[0])
			}
		}
	})
}

// An answer to an ask its asker withdrew, or that expired, does not
// count; the waiter is told which, and neither is listed as open.
func TestAnAnswerToAWithdrawnOrExpiredAskDoesNotCount(t *testing.T) {
	t.Parallel()
	eachAskEngine(t, func(t *testing.T, a, b *Store) {
		ctx := context.Background()
		withdrawn, err := a.PostAsk(ctx, teamAsk("deploy_app", time.Now().Add(time.Hour)), "dana", levels)
		if err != nil {
			t.Fatal(err)
		}
		expiring, err := a.PostAsk(ctx, teamAsk("rollback", time.Now().Add(300*time.Millisecond)), "dana", nil)
		if err != nil {
			t.Fatal(err)
		}
		open, err := a.PostAsk(ctx, teamAsk("status", time.Now().Add(time.Hour)), "erin", nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := a.WithdrawAsk(ctx, withdrawn.ID); err != nil || !ok {
			t.Fatalf("withdrawing an open ask: withdrawn %v, %v", ok, err)
		}
		if ok, err := b.WithdrawAsk(ctx, withdrawn.ID); err != nil || ok {
			t.Fatalf("withdrawing it again: withdrawn %v, %v", ok, err)
		}
		if won, err := b.AnswerAsk(ctx, withdrawn.ID, policy.OptionAllowOnce, lead, session.GrantScope{}); err != nil || won {
			t.Fatalf("an answer to a withdrawn ask: won %v, %v", won, err)
		}
		if _, err := a.WaitAsk(ctx, withdrawn.ID); !errors.Is(err, inbox.ErrWithdrawn) {
			t.Fatalf("waiting on a withdrawn ask: %v", err)
		}
		if _, err := a.WaitAsk(ctx, expiring.ID); !errors.Is(err, inbox.ErrExpired) {
			t.Fatalf("waiting on an expiring ask: %v", err)
		}
		if won, err := b.AnswerAsk(ctx, expiring.ID, policy.OptionAllowOnce, session.Who{Principal: "dana"}, session.GrantScope{}); err != nil || won {
			t.Fatalf("an answer to an expired ask: won %v, %v", won, err)
		}
		list, more, err := b.OpenAsks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || more != 0 || list[0].Ask.ID != open.ID || list[0].Principal != "erin" || len(list[0].Approvers) != 0 {
			t.Fatalf("open asks %+v (more %d), want only %s", list, more, open.ID)
		}
		if _, err := b.GetAsk(ctx, strings.Repeat("0", 32)); !errors.Is(err, inbox.ErrUnknownAsk) {
			t.Fatalf("an unknown ask: %v", err)
		}
		if _, err := b.WaitAsk(ctx, strings.Repeat("0", 32)); !errors.Is(err, inbox.ErrUnknownAsk) {
			t.Fatalf("waiting on an unknown ask: %v", err)
		}
	})
}

// A replica waiting on its ask learns of an answer given through another
// handle (another replica): by a notification on Postgres, by its poll
// on SQLite, either way well within a second.
func TestAWaitingReplicaLearnsOfAnAnswerGivenThroughAnother(t *testing.T) {
	t.Parallel()
	eachAskEngine(t, func(t *testing.T, a, b *Store) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		posted, err := a.PostAsk(ctx, teamAsk("deploy_app", time.Now().Add(time.Hour)), "dana", levels)
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			ans AskAnswer
			err error
			at  time.Time
		}
		got := make(chan result, 1)
		go func() {
			ans, err := a.WaitAsk(ctx, posted.ID)
			got <- result{ans, err, time.Now()}
		}()
		time.Sleep(100 * time.Millisecond) // the waiter is waiting
		answered := time.Now()
		if won, err := b.AnswerAsk(ctx, posted.ID, policy.OptionDeny, lead, session.GrantScope{}); err != nil || !won {
			t.Fatalf("answer: won %v, %v", won, err)
		}
		r := <-got
		if r.err != nil || r.ans.Option != policy.OptionDeny || r.ans.By.Principal != "lena" {
			t.Fatalf("waited: %+v, %v", r.ans, r.err)
		}
		lag := r.at.Sub(answered)
		t.Logf("the waiter learnt of the answer %s after it was committed", lag)
		if lag > time.Second {
			t.Errorf("the waiter learnt of the answer after %s", lag)
		}
		// A waiter whose context ends returns at once, with its error.
		short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
		defer stop()
		pending, err := a.PostAsk(ctx, teamAsk("deploy_app", time.Now().Add(time.Hour)), "dana", levels)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.WaitAsk(short, pending.ID); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a waiter whose context ended: %v", err)
		}
	})
}

// An ask no inbox could show or answer is refused with what is missing,
// and so is one too large to store.
func TestAnAskThatCannotBeShownIsRefused(t *testing.T) {
	t.Parallel()
	s := openTest(t, engines[0].url(t), Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		edit func(*inbox.Ask)
		want string
	}{
		{"no tool", func(a *inbox.Ask) { a.Tool = "" }, "names no tool"},
		{"no expiry", func(a *inbox.Ask) { a.Expires = time.Time{} }, "no expiry"},
		{"no options", func(a *inbox.Ask) { a.Options = nil }, "offers no options"},
		{"too large", func(a *inbox.Ask) { a.Arguments = strings.Repeat("x", maxAskBytes) }, "cut its arguments"},
	} {
		a := teamAsk("deploy_app", time.Now().Add(time.Hour))
		tc.edit(&a)
		if _, err := s.PostAsk(ctx, a, "dana", nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if list, _, _ := s.OpenAsks(ctx); len(list) != 0 {
		t.Errorf("refused asks were stored: %+v", list)
	}
}

// Asks are kept a day past their expiry, then a post sweeps them: the
// table does not grow for ever, and a recent answer stays readable.
func TestAsksADayPastTheirExpiryAreSwept(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, url string) {
		s := openTest(t, url, Options{})
		ctx := context.Background()
		old, err := s.PostAsk(ctx, teamAsk("deploy_app", time.Now().Add(-askKeep-time.Minute)), "dana", nil)
		if err != nil {
			t.Fatal(err)
		}
		recent, err := s.PostAsk(ctx, teamAsk("deploy_app", time.Now().Add(-time.Minute)), "dana", nil)
		if err != nil {
			t.Fatal(err)
		}
		s.sweepAsks(ctx)
		if _, err := s.GetAsk(ctx, old.ID); !errors.Is(err, inbox.ErrUnknownAsk) {
			t.Errorf("an ask a day past its expiry: %v, want it swept", err)
		}
		if a, err := s.GetAsk(ctx, recent.ID); err != nil || a.State(time.Now()) != AskExpired {
			t.Errorf("a recently expired ask: %+v, %v", a, err)
		}
	})
}
