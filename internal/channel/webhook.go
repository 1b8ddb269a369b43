package channel

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolwarden/toolwarden/internal/audit"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// The headers of a webhook post. The signature is
//
//	"sha256=" + hex(HMAC-SHA256(secret, timestamp + "." + body))
//
// where timestamp is the X-Toolwarden-Timestamp header (Unix seconds, as
// decimal digits) and body the raw request body: a receiver recomputes it,
// compares in constant time, and rejects a timestamp more than a few
// minutes old (a replay) or an id it has seen.
const (
	HeaderSignature = "X-Toolwarden-Signature"
	HeaderTimestamp = "X-Toolwarden-Timestamp"
	HeaderEvent     = "X-Toolwarden-Event"
)

// Payload is a webhook post's JSON body.
type Payload struct {
	// Event is "ask" (a call waits for an answer) or "answer" (an ask
	// ended: answered, expired or failed).
	Event string `json:"event"`
	// ID names the ask: its inbox id when it was posted there (the same in
	// the ask and answer events), else a random one.
	ID      string `json:"id"`
	Origin  string `json:"origin,omitempty"`
	Session string `json:"session,omitempty"`
	Server  string `json:"server"`
	Tool    string `json:"tool"`
	App     string `json:"app,omitempty"`
	Title   string `json:"title,omitempty"`
	// Reasons, Hints and Arguments are as the prompts show them: the
	// arguments rendered (long values cut, flagged first), Digest the
	// SHA-256 of the bytes the call forwards.
	Reasons   []string        `json:"reasons,omitempty"`
	Hints     map[string]bool `json:"hints,omitempty"`
	Arguments string          `json:"arguments,omitempty"`
	Digest    string          `json:"digest,omitempty"`
	Scope     string          `json:"scope,omitempty"`
	Options   []inbox.Option  `json:"options,omitempty"`
	Expires   *time.Time      `json:"expires,omitempty"`
	// Channels are where the ask waits for an answer ("elicitation",
	// "inbox"). AnswerURL is a one-time link that answers it in the inbox
	// page, present when the ask is in the inbox and an inbox runs.
	Channels  []string `json:"channels,omitempty"`
	AnswerURL string   `json:"answer_url,omitempty"`
	// Outcome, Channel and Option describe an answer event.
	Outcome string `json:"outcome,omitempty"`
	Channel string `json:"channel,omitempty"`
	Option  string `json:"option,omitempty"`
}

// notify posts the "ask" event, when the webhook wants it, and returns the
// ask's id: posted (the inbox id, "" when not in the inbox) or a new one.
// waitsOn are the channels the ask waits on.
func (r *Runner) notify(p Prompt, dir, posted string, expires time.Time, waitsOn []string) string {
	id := posted
	if id == "" {
		id = randomID()
	}
	if !r.Webhook.Sends("ask") {
		return id
	}
	a := inboxAsk(p, expires)
	pl := Payload{Event: "ask", ID: id, Origin: a.Origin, Session: a.Session, Server: a.Server, Tool: a.Tool, App: a.App,
		Title: a.Title, Reasons: a.Reasons, Hints: a.Hints.Values, Arguments: a.Arguments, Digest: a.Digest, Scope: a.Scope,
		Options: a.Options, Channels: waitsOn}
	if !expires.IsZero() {
		exp := expires.UTC()
		pl.Expires = &exp
	}
	if posted != "" && dir != "" { // a team inbox ask has no local answer link
		link, err := inbox.MintLink(dir, posted)
		switch {
		case err == nil:
			pl.AnswerURL = link
		case errors.Is(err, inbox.ErrNoInbox):
			// Nobody serves the page: a link would lead nowhere.
		default:
			r.log().Warn("cannot mint an answer link for the webhook", "err", err)
		}
	}
	r.send(pl)
	return id
}

// notifyAnswer posts the "answer" event, when the webhook wants it.
func (r *Runner) notifyAnswer(p Prompt, id, channel, outcome, option string) {
	if !r.Webhook.Sends("answer") {
		return
	}
	d := p.Question.Decision
	r.send(Payload{Event: "answer", ID: id, Origin: p.Origin, Session: p.Session, Server: d.Server, Tool: d.Tool, App: d.App,
		Outcome: outcome, Channel: channel, Option: option})
}

// send posts pl in the background: a notice never delays or fails the
// call. Each attempt is bounded by the webhook's timeout; a transport
// error, a 429 or a 5xx is retried once; redirects are not followed.
// FlushWithin abandons a post that outlives its bound.
func (r *Runner) send(pl Payload) {
	body, err := json.Marshal(pl)
	if err != nil {
		r.webhookFailed(pl, err)
		return
	}
	w := r.Webhook
	secret := r.getenv(w.SecretEnv)
	if secret == "" {
		// An unsigned post could not be told from a forgery: not sent.
		r.webhookFailed(pl, fmt.Errorf("$%s is empty or unset, so the webhook post cannot be signed and was not sent (set it to the secret the receiver verifies with)", w.SecretEnv))
		return
	}
	timeout := time.Duration(w.WebhookTimeoutSec() * float64(time.Second))
	client := r.HTTP
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	ctx := r.abandonCtxOnce()
	r.notices.Add(1)
	r.inFlight.Add(1)
	go func() {
		defer r.notices.Done()
		defer r.inFlight.Add(-1)
		var last error
		for attempt := 0; attempt < 2 && ctx.Err() == nil; attempt++ {
			retry, err := post(ctx, client, w.URL, []byte(secret), pl.Event, body, timeout)
			if err == nil {
				r.log().Debug("webhook sent", "event", pl.Event, "id", pl.ID)
				r.record(pl, audit.Ask{Ask: pl.ID, Channel: Webhook, Outcome: "sent", Option: pl.Option})
				return
			}
			last = err
			if !retry {
				break
			}
		}
		if ctx.Err() != nil {
			if last == nil {
				last = ctx.Err()
			}
			last = fmt.Errorf("abandoned unfinished so that the asking process could answer (%v); the receiver may or may not have it", last)
		}
		r.webhookFailed(pl, last)
	}()
}

// post makes one signed POST; retry says whether a second try may help.
func post(parent context.Context, client *http.Client, url string, secret []byte, event string, body []byte, timeout time.Duration) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "toolwarden-webhook")
	req.Header.Set(HeaderEvent, event)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(secret, ts, body))
	resp, err := client.Do(req)
	if err != nil {
		return true, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // nothing in it is read
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return false, fmt.Errorf("the receiver answered %s (redirects are not followed: set url to where it points)", resp.Status)
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("the receiver answered %s", resp.Status)
	}
	return false, fmt.Errorf("the receiver answered %s", resp.Status)
}

// Sign is the X-Toolwarden-Signature of body sent at Unix time ts.
func Sign(secret []byte, ts int64, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func (r *Runner) webhookFailed(pl Payload, err error) {
	r.log().Warn("webhook post failed; the ask still waits on its other channels", "event", pl.Event, "id", pl.ID, "err", err)
	r.record(pl, audit.Ask{Ask: pl.ID, Channel: Webhook, Outcome: "failed", Error: err.Error()})
}

func (r *Runner) record(pl Payload, a audit.Ask) {
	if r.Record == nil {
		return
	}
	a.Server, a.Tool, a.App = pl.Server, pl.Tool, pl.App
	r.Record(a)
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
