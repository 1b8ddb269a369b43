package inbox

import (
	"encoding/json"
	"fmt"
	"time"
)

// Respond records option as the answer to ask id, from channel ("inbox",
// "webhook-link", ...). The first answer wins: a second one gets
// ErrAnswered. An option the ask does not offer (ErrNotOffered), an unknown
// or withdrawn ask (ErrUnknownAsk) and an expired one (ErrExpired) are
// refused.
func Respond(dir, id, option, channel string) error {
	if channel == "" {
		return fmt.Errorf("inbox: respond: no channel named")
	}
	a, err := Get(dir, id)
	if err != nil {
		return err
	}
	if !a.Offers(option) {
		return fmt.Errorf("inbox: ask %s offers %s, not %q: %w", id, optionIDs(a.Options), option, ErrNotOffered)
	}
	b, err := json.Marshal(Answer{AskID: id, Option: option, Channel: channel, At: time.Now().UTC()})
	if err != nil {
		return fmt.Errorf("inbox: respond: %w", err)
	}
	won, err := writeExclusive(answerPath(dir, id), b)
	if err != nil {
		return fmt.Errorf("inbox: respond to %s: %w", id, err)
	}
	if !won {
		return fmt.Errorf("inbox: ask %s: %w", id, ErrAnswered)
	}
	return nil
}

func optionIDs(opts []Option) []string {
	ids := make([]string, len(opts))
	for i, o := range opts {
		ids[i] = o.ID
	}
	return ids
}
