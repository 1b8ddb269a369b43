package channel

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/toolwarden/toolwarden/internal/audit"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// rendezvous returns a fresh private inbox directory.
func rendezvous(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rv")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// records collects what a Runner audits.
type records struct {
	mu  sync.Mutex
	all []audit.Ask
}

func (r *records) add(a audit.Ask) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, a)
}

// has reports whether a record of channel with outcome (and option, when
// given) was made.
func (r *records) has(channel, outcome, option string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range r.all {
		if a.Channel == channel && a.Outcome == outcome && (option == "" || a.Option == option) {
			return true
		}
	}
	return false
}

func (r *records) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, _ := json.Marshal(r.all)
	return string(b)
}

func runner(dir string, ch config.Channel, rec *records) *Runner {
	return &Runner{
		Setting: config.ChannelSetting{Value: ch, Path: "approval_channel", Pos: config.Position{File: "config.toml", Line: 1, Col: 1}},
		Dir:     func() (string, error) { return dir, nil },
		Record:  rec.add,
	}
}

// prompt is an ask about write_file on server fs.
func prompt(timeout time.Duration) Prompt {
	d := &policy.Decision{Decision: policy.Ask, Server: "fs", App: "fs", Tool: "write_file", Rememberable: true,
		Reasons: []policy.Reason{{Code: "destructive", Message: "the tool may change or delete data"}}}
	d.Hints.Put(hints.Destructive, hints.True)
	q := NewQuestion("write_file", d, json.RawMessage(`{"path":"/tmp/x","content":"hi"}`), false)
	return Prompt{Origin: "wrap", Session: "s1", Question: &q, Trust: "pinned", Timeout: timeout}
}

// pendingAsk waits until the inbox in dir holds one ask, and returns it.
func pendingAsk(t *testing.T, dir string) inbox.Ask {
	t.Helper()
	for i := 0; ; i++ {
		asks, err := inbox.List(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(asks) == 1 {
			return asks[0]
		}
		if i > 2000 {
			t.Fatalf("the inbox holds %d asks, want 1", len(asks))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type outcome struct {
	ans Answer
	err error
}

func ask(r *Runner, p Prompt, elicit Elicit) <-chan outcome {
	out := make(chan outcome, 1)
	go func() {
		a, err := r.Ask(context.Background(), p, elicit)
		out <- outcome{a, err}
	}()
	return out
}

func TestAnInboxAnswerIsTheAnswerAndTheAskIsWithdrawn(t *testing.T) {
	t.Parallel()
	for _, option := range []string{policy.OptionAllowOnce, policy.OptionDeny} {
		t.Run(option, func(t *testing.T) {
			t.Parallel()
			dir, rec := rendezvous(t), &records{}
			done := ask(runner(dir, config.ChannelInbox, rec), prompt(time.Hour), nil)
			a := pendingAsk(t, dir)
			if a.Server != "fs" || a.Tool != "write_file" || a.Origin != "wrap" || a.Session != "s1" || a.Hints.Trust != "pinned" || !a.Hints.Values["destructiveHint"] {
				t.Errorf("ask %+v", a)
			}
			if !strings.Contains(a.Arguments, `content = "hi"`) || len(a.Digest) != 64 || !strings.Contains(a.Reasons[0], "may change") {
				t.Errorf("the ask does not show the call as the prompt does: %+v", a)
			}
			if err := inbox.Respond(dir, a.ID, option, "inbox"); err != nil {
				t.Fatal(err)
			}
			got := <-done
			if got.err != nil || got.ans != (Answer{Option: option, Channel: Inbox, By: "inbox"}) {
				t.Fatalf("Ask = %+v, %v", got.ans, got.err)
			}
			if asks, _ := inbox.List(dir); len(asks) != 0 {
				t.Errorf("the answered ask is still pending: %v", asks)
			}
			if _, err := os.Stat(filepath.Join(dir, "asks", a.ID+".json")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the ask file is still there: %v", err)
			}
			if !rec.has(Inbox, "posted", "") || !rec.has(Inbox, "answered", option) {
				t.Errorf("records %s", rec)
			}
		})
	}
}

func TestNoneRefusesAtOnceAndPostsNothing(t *testing.T) {
	t.Parallel()
	dir, rec := rendezvous(t), &records{}
	called := false
	_, err := runner(dir, config.ChannelNone, rec).Ask(context.Background(), prompt(time.Hour), func(context.Context) (string, error) {
		called = true
		return policy.OptionAllowOnce, nil
	})
	var refused *RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("err = %v, want a refusal", err)
	}
	if called {
		t.Error("the client was asked")
	}
	if asks, _ := inbox.List(dir); len(asks) != 0 {
		t.Errorf("posted %v", asks)
	}
	msg := Refusal(refused.Setting)
	for _, want := range []string{`approval_channel = "none" at config.toml:1:1 sends asks to nobody`, `set approval_channel to "elicitation", "inbox" or "both" there`} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q does not say %q", msg, want)
		}
	}
	if !rec.has(None, "refused", "") {
		t.Errorf("records %s", rec)
	}
}

func TestBothTakesTheFirstAnswerAndWithdrawsTheOther(t *testing.T) {
	t.Parallel()
	t.Run("the client answers first: the inbox ask is withdrawn", func(t *testing.T) {
		t.Parallel()
		dir, rec := rendezvous(t), &records{}
		posted := make(chan string, 1)
		got, err := runner(dir, config.ChannelBoth, rec).Ask(context.Background(), prompt(time.Hour), func(context.Context) (string, error) {
			posted <- pendingAsk(t, dir).ID // answer only once the inbox shows the ask too
			return policy.OptionDeny, nil
		})
		if err != nil || got != (Answer{Option: policy.OptionDeny, Channel: Elicitation}) {
			t.Fatalf("Ask = %+v, %v", got, err)
		}
		id := <-posted
		if err := inbox.Respond(dir, id, policy.OptionAllowOnce, "inbox"); !errors.Is(err, inbox.ErrUnknownAsk) {
			t.Errorf("answering the withdrawn ask: %v, want ErrUnknownAsk", err)
		}
		if !rec.has(Elicitation, "answered", policy.OptionDeny) || !rec.has(Inbox, "withdrawn", "") {
			t.Errorf("records %s", rec)
		}
	})
	t.Run("the inbox answers first: the elicitation is cancelled", func(t *testing.T) {
		t.Parallel()
		dir, rec := rendezvous(t), &records{}
		cancelled := make(chan error, 1)
		done := ask(runner(dir, config.ChannelBoth, rec), prompt(time.Hour), func(ctx context.Context) (string, error) {
			<-ctx.Done()
			cancelled <- ctx.Err()
			return "", ctx.Err()
		})
		if err := inbox.Respond(dir, pendingAsk(t, dir).ID, policy.OptionAllowOnce, "webhook-link"); err != nil {
			t.Fatal(err)
		}
		got := <-done
		if got.err != nil || got.ans != (Answer{Option: policy.OptionAllowOnce, Channel: Inbox, By: "webhook-link"}) {
			t.Fatalf("Ask = %+v, %v", got.ans, got.err)
		}
		if err := <-cancelled; !errors.Is(err, context.Canceled) {
			t.Errorf("the elicitation ended with %v, want it cancelled", err)
		}
		if !rec.has(Inbox, "answered", policy.OptionAllowOnce) || !rec.has(Elicitation, "withdrawn", "") {
			t.Errorf("records %s", rec)
		}
	})
}

func TestAFailingChannelLeavesTheOthersWaiting(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		elicit Elicit
	}{
		{"a client that errs", func(context.Context) (string, error) { return "", errors.New("client gone") }},
		{"a client answering what was not offered", func(context.Context) (string, error) { return policy.OptionAlways, nil }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, rec := rendezvous(t), &records{}
			done := ask(runner(dir, config.ChannelBoth, rec), prompt(time.Hour), c.elicit)
			a := pendingAsk(t, dir)
			for !rec.has(Elicitation, "failed", "") {
				time.Sleep(5 * time.Millisecond)
			}
			if err := inbox.Respond(dir, a.ID, policy.OptionAllowOnce, "inbox"); err != nil {
				t.Fatal(err)
			}
			if got := <-done; got.err != nil || got.ans.Channel != Inbox {
				t.Fatalf("Ask = %+v, %v", got.ans, got.err)
			}
		})
	}
	t.Run("an inbox that cannot be written leaves the client to answer", func(t *testing.T) {
		t.Parallel()
		rec := &records{}
		r := runner("", config.ChannelBoth, rec)
		r.Dir = func() (string, error) { return "", errors.New("not private") }
		got, err := r.Ask(context.Background(), prompt(time.Hour), func(context.Context) (string, error) { return policy.OptionAllowOnce, nil })
		if err != nil || got.Channel != Elicitation {
			t.Fatalf("Ask = %+v, %v", got, err)
		}
		if !rec.has(Inbox, "failed", "") {
			t.Errorf("records %s", rec)
		}
	})
	t.Run("with the inbox alone, an inbox that cannot be written is the error", func(t *testing.T) {
		t.Parallel()
		r := runner("", config.ChannelInbox, &records{})
		r.Dir = func() (string, error) { return "", errors.New("not private") }
		if _, err := r.Ask(context.Background(), prompt(time.Hour), nil); err == nil || !strings.Contains(err.Error(), "not private") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("every channel failing ends the ask with the last failure", func(t *testing.T) {
		t.Parallel()
		r := runner("", config.ChannelElicitation, &records{})
		_, err := r.Ask(context.Background(), prompt(time.Hour), func(context.Context) (string, error) { return "", errors.New("client gone") })
		if err == nil || !strings.Contains(err.Error(), "client gone") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestAnUnansweredAskExpiresAndIsWithdrawn(t *testing.T) {
	t.Parallel()
	dir, rec := rendezvous(t), &records{}
	_, err := runner(dir, config.ChannelInbox, rec).Ask(context.Background(), prompt(50*time.Millisecond), nil)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "asks"))
	if len(entries) != 0 {
		t.Errorf("left %d ask files", len(entries))
	}
	if !rec.has(Inbox, "expired", "") {
		t.Errorf("records %s", rec)
	}
}

func TestACallerThatGoesAwayWithdrawsTheAsk(t *testing.T) {
	t.Parallel()
	dir := rendezvous(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := runner(dir, config.ChannelInbox, &records{}).Ask(ctx, prompt(time.Hour), nil)
		done <- err
	}()
	pendingAsk(t, dir)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if asks, _ := inbox.List(dir); len(asks) != 0 {
		t.Errorf("still pending: %v", asks)
	}
}

func TestElicitationAloneWithoutAClientThatElicitsIsNoChannel(t *testing.T) {
	t.Parallel()
	dir := rendezvous(t)
	r := runner(dir, config.ChannelElicitation, &records{})
	if _, err := r.Ask(context.Background(), prompt(time.Hour), nil); !errors.Is(err, ErrNoChannel) {
		t.Fatalf("err = %v", err)
	}
	if r.Uses() {
		t.Error("plain elicitation without a webhook claims the runner")
	}
	if !runner(dir, config.ChannelUnset, nil).Setting.Effective().Elicits() {
		t.Error("unset does not elicit")
	}
	withHook := runner(dir, config.ChannelElicitation, nil)
	withHook.Webhook = &config.Webhook{URL: "http://127.0.0.1:9/", SecretEnv: "S"}
	if !withHook.Uses() || !runner(dir, config.ChannelInbox, nil).Uses() {
		t.Error("the inbox or a webhook does not claim the runner")
	}
}

func TestTheInboxAskOffersWhatTheQuestionOffersWithItsTitles(t *testing.T) {
	t.Parallel()
	d := &policy.Decision{Decision: policy.Ask, Server: "fs", Tool: "write_file", Rememberable: true,
		Prompt:  &policy.Prompt{Title: "Write?", Options: []string{policy.OptionAllowOnce, policy.OptionAllowSessionScoped, policy.OptionDeny}, Scope: "path under /repo/**"},
		Scopes:  []policy.ProposedScope{{}},
		Flagged: []string{"/path"}}
	q := NewQuestion("fs__write_file", d, json.RawMessage(`{"content":"x","path":"/repo/a"}`), false)
	q.Drifted = true
	a := inboxAsk(Prompt{Question: &q}, time.Now().Add(time.Minute))
	if a.Title != "Write?" || a.Scope != "path under /repo/**" || !a.Hints.Drifted || a.Hints.Values != nil {
		t.Errorf("ask %+v", a)
	}
	var ids, titles []string
	for _, o := range a.Options {
		ids, titles = append(ids, o.ID), append(titles, o.Title)
	}
	if strings.Join(ids, ",") != "allow_once,allow_session_scoped,deny" || titles[1] != "Allow for this session for path under /repo/**" {
		t.Errorf("options %v %v", ids, titles)
	}
	if !strings.HasPrefix(strings.TrimSpace(strings.SplitN(a.Arguments, "\n", 2)[1]), "* path") {
		t.Errorf("the flagged argument is not first:\n%s", a.Arguments)
	}
}
