package channel

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// A prompt the client ends without an option (claude -p cancels, codex
// exec declines) ends the ask denied, but neither the audit nor the
// webhook's answer event calls it "answered" with option "deny": a
// reader must tell it from a person's Deny. The inbox ask is withdrawn.
func TestAPromptTheClientEndsIsRecordedAsWhatTheClientDidNotAsADeny(t *testing.T) {
	t.Parallel()
	for _, outcome := range []string{Declined, Cancelled} {
		t.Run(outcome, func(t *testing.T) {
			t.Parallel()
			dir, rec, rv := rendezvous(t), &records{}, newReceiver(t, 0)
			r := hooked(dir, config.ChannelBoth, rv.URL, rec, "ask", "answer")
			posted := make(chan string, 1)
			got, err := r.Ask(context.Background(), prompt(time.Hour), func(context.Context) (string, error) {
				posted <- pendingAsk(t, dir).ID
				return "", &EndedError{Outcome: outcome}
			})
			if err != nil || got != (Answer{Option: policy.OptionDeny, Channel: Elicitation, Ended: outcome}) {
				t.Fatalf("Ask = %+v, %v", got, err)
			}
			if err := inbox.Respond(dir, <-posted, policy.OptionAllowOnce, "inbox"); !errors.Is(err, inbox.ErrUnknownAsk) {
				t.Errorf("answering the withdrawn inbox ask: %v, want ErrUnknownAsk", err)
			}
			r.Flush()
			if !rec.has(Elicitation, outcome, "") || rec.has(Elicitation, "answered", "") || !rec.has(Inbox, "withdrawn", "") {
				t.Errorf("records %s", rec)
			}
			for _, a := range rec.all {
				if a.Channel == Elicitation && a.Option != "" {
					t.Errorf("the ended prompt is recorded with option %q: %s", a.Option, rec)
				}
			}
			var answer *Payload
			for _, p := range rv.all() {
				var pl Payload
				if err := json.Unmarshal(p.body, &pl); err != nil {
					t.Fatal(err)
				}
				if pl.Event == "answer" {
					answer = &pl
				}
			}
			if answer == nil || answer.Outcome != outcome || answer.Channel != Elicitation || answer.Option != "" {
				t.Errorf("answer event %+v", answer)
			}
		})
	}
}
