package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// Every ask wrap makes reaches the webhook, exactly once, whichever
// channel asks (elicitation/create, a 2026-07-28 client's input request,
// the inbox) and when no channel can (a client without elicitation), and
// the post never holds the call. An approval prompt the client ends
// without an option is audited as what the client did, not as a deny.

const wrapWebhookSecret = "e2e-wrap-webhook-secret"

// wrapWithWebhook is wrap in front of the test server under channel, with
// a webhook to rv, an audit log and a private rendezvous directory, run
// through env(1) so that it gets the webhook's secret.
func wrapWithWebhook(t *testing.T, channel, url, audit string) []string {
	t.Helper()
	cfg := writeFile(t, "wrapwebhook.toml", "approval_channel = \""+channel+"\"\n\n[webhook]\nurl = \""+url+"\"\nsecret_env = \"TW_E2E_WRAP_WEBHOOK_SECRET\"\ntimeout_sec = 60\n")
	rendezvous := filepath.Join(t.TempDir(), "rv")
	if err := os.Mkdir(rendezvous, 0o700); err != nil {
		t.Fatal(err)
	}
	args := wrapArgs(t, "ts", []string{cfg}, testServer, "-state", t.TempDir())
	args = append([]string{args[0], "--audit", audit}, args[1:]...)
	return append([]string{inbox.EnvRuntimeDir + "=" + rendezvous, "TW_E2E_WRAP_WEBHOOK_SECRET=" + wrapWebhookSecret, twBin}, args...)
}

// askPosts decodes the receiver's "ask" events.
func askPosts(t *testing.T, rv *webhookReceiver) []struct {
	Event, Tool string
	Channels    []string
} {
	t.Helper()
	var out []struct {
		Event, Tool string
		Channels    []string
	}
	for _, b := range rv.received() {
		var pl struct {
			Event, Tool string
			Channels    []string
		}
		if err := json.Unmarshal(b, &pl); err != nil {
			t.Fatalf("post %s: %v", b, err)
		}
		if pl.Event == "ask" {
			out = append(out, pl)
		}
	}
	return out
}

// The receiver holds every post for 30 s (timeout_sec = 60): the call
// still answers at once, and the receiver gets the ask once, saying where
// it waits for an answer (none: the client was told how to approve).
func TestEveryAskOfWrapReachesTheWebhookOnceWithoutHoldingTheCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		channel  string
		legacy   bool // 2025-11-25 (elicitation/create), else 2026-07-28 (input request)
		elicits  bool
		channels []string
	}{
		{"a 2025-11-25 client that elicits, under elicitation", "elicitation", true, true, []string{"elicitation"}},
		{"a 2025-11-25 client that elicits, under both", "both", true, true, []string{"elicitation", "inbox"}},
		{"a 2026-07-28 client that elicits, under elicitation", "elicitation", false, true, []string{"elicitation"}},
		{"a 2026-07-28 client that elicits, under both", "both", false, true, []string{"elicitation"}},
		{"a 2025-11-25 client without elicitation", "elicitation", true, false, nil},
		{"a 2026-07-28 client without elicitation", "elicitation", false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rv := newWebhookReceiver(t, true)
			var ask *scripted
			if tc.elicits {
				ask = answers("allow_once")
			}
			c := startGo(t, tc.legacy, ask, "env", wrapWithWebhook(t, tc.channel, rv.url, filepath.Join(t.TempDir(), "audit.jsonl"))...)
			start := time.Now()
			out, isErr := c.call(t, "write", map[string]any{"what": "a"})
			took := time.Since(start)
			if tc.elicits && (isErr || out != "wrote a" || ask.count() != 1) {
				t.Fatalf("call: %q (error %v), asked %d times", out, isErr, ask.count())
			}
			if !tc.elicits && (!isErr || !strings.Contains(out, "cannot show approval prompts")) {
				t.Fatalf("call: %q (error %v), want the advice of a client that cannot ask", out, isErr)
			}
			if took > 10*time.Second {
				t.Errorf("the call took %s with a receiver that holds every post for 30 s", took)
			}
			eventually(t, 30*time.Second, "the ask's post", func() bool { return len(askPosts(t, rv)) > 0 })
			// A second post (the retry of a 2026-07-28 client, say) would
			// follow within moments.
			time.Sleep(time.Second)
			posts := askPosts(t, rv)
			if len(posts) != 1 {
				t.Fatalf("%d ask posts, want 1: %q", len(posts), rv.received())
			}
			if posts[0].Tool != "write" || !slices.Equal(posts[0].Channels, tc.channels) {
				t.Errorf("ask post %+v, want tool write waiting on %q", posts[0], tc.channels)
			}
		})
	}
}

// channelRecords reads the audit's "channel" records of one channel.
func channelRecords(t *testing.T, audit, channel string) []map[string]string {
	t.Helper()
	f, err := os.Open(audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Event    string
			Decision map[string]string
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Event == "channel" && r.Decision["channel"] == channel {
			out = append(out, r.Decision)
		}
	}
	return out
}

// A prompt the client declines (codex exec) or cancels (claude -p) is
// audited as "declined" or "cancelled" with no option; only a chosen Deny
// is "answered" with option "deny". Both paths of wrap: its own
// elicitation (no webhook), the channel runner (a webhook), and a
// 2026-07-28 client's answer on its retry.
func TestAnEndedPromptIsAuditedAsWhatTheClientDidNotAsADeny(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		legacy  bool
		webhook bool
	}{
		{"a 2025-11-25 client, no webhook", true, false},
		{"a 2025-11-25 client, a webhook", true, true},
		{"a 2026-07-28 client, a webhook", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			audit := filepath.Join(t.TempDir(), "audit.jsonl")
			var args []string
			if tc.webhook {
				args = wrapWithWebhook(t, "elicitation", newWebhookReceiver(t, false).url, audit)
			} else {
				args = append([]string{twBin, "wrap", "--audit", audit}, wrapArgs(t, "ts", nil, testServer, "-state", t.TempDir())[1:]...)
			}
			c := startGo(t, tc.legacy, answers("decline", "cancel", "deny"), "env", args...)
			for _, what := range []string{"declined", "cancelled", "denied"} {
				if out, isErr := c.call(t, "write", map[string]any{"what": what}); !isErr {
					t.Fatalf("%s: the call ran: %q", what, out)
				}
			}
			var got []string
			for _, r := range channelRecords(t, audit, "elicitation") {
				got = append(got, r["outcome"]+"/"+r["option"])
			}
			if want := []string{"declined/", "cancelled/", "answered/deny"}; !slices.Equal(got, want) {
				t.Errorf("elicitation records %q, want %q", got, want)
			}
		})
	}
}
