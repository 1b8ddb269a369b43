package channel

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/policy"
)

const secret = "s3cret-for-tests"

// verify is what a receiver does, written from the documented scheme
// (docs/approvals.md), not from Sign: the signature is HMAC-SHA256 of
// "<timestamp>.<body>" with the secret, hex, after "sha256="; a timestamp
// more than five minutes from now is a replay.
func verify(key string, h http.Header, body []byte, now time.Time) error {
	ts := h.Get("X-Toolwarden-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("bad timestamp %q", ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return errors.New("stale timestamp: a replay")
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(ts + "."))
	m.Write(body)
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(h.Get("X-Toolwarden-Signature"))) {
		return errors.New("bad signature")
	}
	return nil
}

// received is one request a receiver got.
type received struct {
	header http.Header
	body   []byte
}

// receiver is a local webhook endpoint: it keeps every post and answers
// with status (200 when 0) and a body that tries to answer the ask.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	posts  []received
	status int
	got    chan struct{}
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{status: status, got: make(chan struct{}, 16)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.posts = append(r.posts, received{req.Header.Clone(), body})
		r.mu.Unlock()
		r.got <- struct{}{}
		if r.status != 0 {
			w.WriteHeader(r.status)
		}
		// Whatever a receiver answers is never read as an answer.
		fmt.Fprint(w, `{"option":"allow_once","decision":"allow_once"}`)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) all() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.posts...)
}

func hooked(dir string, ch config.Channel, url string, rec *records, events ...string) *Runner {
	r := runner(dir, ch, rec)
	r.Webhook = &config.Webhook{URL: url, SecretEnv: "TW_SECRET", Events: events}
	r.Getenv = func(k string) string {
		if k == "TW_SECRET" {
			return secret
		}
		return ""
	}
	return r
}

func TestTheWebhookGetsASignedAskWithAOneTimeAnswerLink(t *testing.T) {
	t.Parallel()
	dir, rec := rendezvous(t), &records{}
	remove, err := inbox.Announce(dir, "http://127.0.0.1:7777")
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	rv := newReceiver(t, 0)
	r := hooked(dir, config.ChannelInbox, rv.URL, rec, "ask", "answer")
	done := ask(r, prompt(time.Hour), nil)
	a := pendingAsk(t, dir)
	<-rv.got

	p := rv.all()[0]
	if err := verify(secret, p.header, p.body, time.Now()); err != nil {
		t.Fatalf("the receiver rejects the post: %v", err)
	}
	if p.header.Get("X-Toolwarden-Event") != "ask" || p.header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", p.header)
	}
	var pl Payload
	if err := json.Unmarshal(p.body, &pl); err != nil {
		t.Fatal(err)
	}
	if pl.ID != a.ID || pl.Server != "fs" || pl.Tool != "write_file" || pl.Session != "s1" || pl.Digest != a.Digest || pl.Arguments != a.Arguments || pl.Expires == nil || len(pl.Options) != 2 || strings.Join(pl.Channels, ",") != "inbox" {
		t.Errorf("payload %+v\nask %+v", pl, a)
	}
	prefix := "http://127.0.0.1:7777/a/" + a.ID + "?k="
	if !strings.HasPrefix(pl.AnswerURL, prefix) {
		t.Fatalf("answer_url %q, want %s...", pl.AnswerURL, prefix)
	}
	if err := inbox.CheckLink(dir, a.ID, strings.TrimPrefix(pl.AnswerURL, prefix)); err != nil {
		t.Errorf("the link is not live: %v", err)
	}

	if err := inbox.Respond(dir, a.ID, policy.OptionDeny, "webhook-link"); err != nil {
		t.Fatal(err)
	}
	if got := <-done; got.err != nil || got.ans.Option != policy.OptionDeny || got.ans.By != "webhook-link" {
		t.Fatalf("Ask = %+v, %v", got.ans, got.err)
	}
	r.Flush()
	posts := rv.all()
	if len(posts) != 2 {
		t.Fatalf("%d posts, want the ask and its answer", len(posts))
	}
	var ans Payload
	_ = json.Unmarshal(posts[1].body, &ans)
	if ans.Event != "answer" || ans.ID != a.ID || ans.Outcome != "answered" || ans.Option != "deny" || ans.Channel != "inbox" {
		t.Errorf("answer event %+v", ans)
	}
	if err := verify(secret, posts[1].header, posts[1].body, time.Now()); err != nil {
		t.Errorf("answer event: %v", err)
	}
	if !rec.has(Webhook, "sent", "") {
		t.Errorf("records %s", rec)
	}
}

// TestAReceiverRejectsWhatWasNotSignedWithTheSecret: the scheme holds
// against a tampered body, another secret, a moved timestamp and a replay.
func TestAReceiverRejectsWhatWasNotSignedWithTheSecret(t *testing.T) {
	t.Parallel()
	dir := rendezvous(t)
	rv := newReceiver(t, 0)
	r := hooked(dir, config.ChannelElicitation, rv.URL, &records{})
	if _, err := r.Ask(context.Background(), prompt(time.Hour), func(context.Context) (string, error) { return "deny", nil }); err != nil {
		t.Fatal(err)
	}
	r.Flush()
	p := rv.all()[0]
	if err := verify(secret, p.header, p.body, time.Now()); err != nil {
		t.Fatalf("the genuine post: %v", err)
	}
	tampered := []byte(strings.Replace(string(p.body), `"write_file"`, `"read_file"`, 1))
	moved := p.header.Clone()
	ts, _ := strconv.ParseInt(p.header.Get("X-Toolwarden-Timestamp"), 10, 64)
	moved.Set("X-Toolwarden-Timestamp", strconv.FormatInt(ts+1, 10))
	cases := []struct {
		name   string
		key    string
		header http.Header
		body   []byte
		now    time.Time
	}{
		{"a tampered body", secret, p.header, tampered, time.Now()},
		{"another secret", "not-the-secret", p.header, p.body, time.Now()},
		{"a timestamp moved to pass a replay check", secret, moved, p.body, time.Now()},
		{"a replay an hour later", secret, p.header, p.body, time.Now().Add(time.Hour)},
	}
	for _, c := range cases {
		if err := verify(c.key, c.header, c.body, c.now); err == nil {
			t.Errorf("%s was accepted", c.name)
		}
	}
	if string(tampered) == string(p.body) {
		t.Fatal("the tampering changed nothing")
	}
	var pl Payload
	_ = json.Unmarshal(p.body, &pl)
	if pl.AnswerURL != "" || strings.Join(pl.Channels, ",") != "elicitation" || len(pl.ID) != 32 {
		t.Errorf("an ask not in the inbox: %+v", pl)
	}
	if entries, _ := inbox.List(dir); len(entries) != 0 {
		t.Errorf("elicitation alone posted to the inbox: %v", entries)
	}
}

func TestNoInboxRunningMeansNoAnswerLink(t *testing.T) {
	t.Parallel()
	dir := rendezvous(t)
	rv := newReceiver(t, 0)
	r := hooked(dir, config.ChannelInbox, rv.URL, &records{})
	done := ask(r, prompt(time.Hour), nil)
	a := pendingAsk(t, dir)
	<-rv.got
	var pl Payload
	_ = json.Unmarshal(rv.all()[0].body, &pl)
	if pl.AnswerURL != "" || pl.ID != a.ID {
		t.Errorf("payload %+v", pl)
	}
	_ = inbox.Respond(dir, a.ID, "deny", "inbox")
	<-done
}

// TestTheWebhookNeverAnswersNorBlocksTheAsk: a receiver that answers with
// an "allow", that fails, or that hangs, changes nothing about the ask.
func TestTheWebhookNeverAnswersNorBlocksTheAsk(t *testing.T) {
	t.Parallel()
	t.Run("a receiver's reply is not an answer", func(t *testing.T) {
		t.Parallel()
		dir := rendezvous(t)
		rv := newReceiver(t, 0)
		r := hooked(dir, config.ChannelInbox, rv.URL, &records{})
		_, err := r.Ask(context.Background(), prompt(300*time.Millisecond), nil)
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("err = %v, want ErrTimeout: only the inbox answers", err)
		}
		if len(rv.all()) != 1 {
			t.Errorf("%d posts", len(rv.all()))
		}
	})
	t.Run("a hanging receiver is cut off and the inbox still answers", func(t *testing.T) {
		t.Parallel()
		dir, rec := rendezvous(t), &records{}
		release := make(chan struct{})
		hang := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
		defer hang.Close()
		defer close(release)
		r := hooked(dir, config.ChannelInbox, hang.URL, rec)
		short := 0.05
		r.Webhook.TimeoutSec = &short
		done := ask(r, prompt(time.Hour), nil)
		if err := inbox.Respond(dir, pendingAsk(t, dir).ID, "allow_once", "inbox"); err != nil {
			t.Fatal(err)
		}
		if got := <-done; got.err != nil || got.ans.Option != "allow_once" {
			t.Fatalf("Ask = %+v, %v", got.ans, got.err)
		}
		r.Flush()
		if !rec.has(Webhook, "failed", "") {
			t.Errorf("records %s", rec)
		}
	})
}

func TestWebhookFailuresAreRetriedOnceAtMost(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		posts  int
		sent   bool
	}{
		{"a 2xx is sent once", http.StatusNoContent, 1, true},
		{"a 5xx is retried once", http.StatusBadGateway, 2, false},
		{"a 429 is retried once", http.StatusTooManyRequests, 2, false},
		{"a 4xx is not retried", http.StatusUnauthorized, 1, false},
		{"a redirect is not followed", http.StatusFound, 1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rv := newReceiver(t, c.status)
			rec := &records{}
			r := hooked(rendezvous(t), config.ChannelElicitation, rv.URL, rec)
			if _, err := r.Ask(context.Background(), prompt(time.Hour), func(context.Context) (string, error) { return "allow_once", nil }); err != nil {
				t.Fatal(err)
			}
			r.Flush()
			if n := len(rv.all()); n != c.posts {
				t.Errorf("%d posts, want %d", n, c.posts)
			}
			if rec.has(Webhook, "sent", "") != c.sent || rec.has(Webhook, "failed", "") == c.sent {
				t.Errorf("records %s", rec)
			}
		})
	}
	t.Run("the redirect target gets nothing", func(t *testing.T) {
		t.Parallel()
		target := newReceiver(t, 0)
		redirect := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
		defer redirect.Close()
		r := hooked(rendezvous(t), config.ChannelElicitation, redirect.URL, &records{})
		_, _ = r.Ask(context.Background(), prompt(time.Hour), func(context.Context) (string, error) { return "allow_once", nil })
		r.Flush()
		if n := len(target.all()); n != 0 {
			t.Errorf("the redirect was followed: %d posts", n)
		}
	})
}

func TestAWebhookWithoutItsSecretSendsNothing(t *testing.T) {
	t.Parallel()
	rv := newReceiver(t, 0)
	rec := &records{}
	r := hooked(rendezvous(t), config.ChannelElicitation, rv.URL, rec)
	r.Getenv = func(string) string { return "" }
	if _, err := r.Ask(context.Background(), prompt(time.Hour), func(context.Context) (string, error) { return "allow_once", nil }); err != nil {
		t.Fatal(err)
	}
	r.Flush()
	if n := len(rv.all()); n != 0 {
		t.Errorf("%d unsigned posts", n)
	}
	if !rec.has(Webhook, "failed", "") || !strings.Contains(rec.String(), "$TW_SECRET is empty or unset") {
		t.Errorf("records %s", rec)
	}
}

func TestNoneNotifiesNobody(t *testing.T) {
	t.Parallel()
	rv := newReceiver(t, 0)
	r := hooked(rendezvous(t), config.ChannelNone, rv.URL, &records{})
	_, err := r.Ask(context.Background(), prompt(time.Hour), nil)
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Fatal(err)
	}
	r.Flush()
	if n := len(rv.all()); n != 0 {
		t.Errorf("%d posts", n)
	}
}

func TestSignMatchesTheDocumentedScheme(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("X-Toolwarden-Timestamp", strconv.FormatInt(time.Now().Unix(), 10))
	ts, _ := strconv.ParseInt(h.Get("X-Toolwarden-Timestamp"), 10, 64)
	body := []byte(`{"event":"ask"}`)
	h.Set("X-Toolwarden-Signature", Sign([]byte(secret), ts, body))
	if err := verify(secret, h, body, time.Now()); err != nil {
		t.Fatal(err)
	}
}
