package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// The webhook seen from a hook, through the real binary: a post never
// holds the hook's answer past a small bound, and every ask is posted,
// the ones Claude Code's own dialog asks included, unless the channel is
// "none".

const hookWebhookSecret = "e2e-hook-webhook-secret"

// webhookReceiver records every post's body as it arrives; with block, it
// then never answers (until the test ends).
type webhookReceiver struct {
	url   string
	mu    sync.Mutex
	posts [][]byte
}

func newWebhookReceiver(t *testing.T, block bool) *webhookReceiver {
	t.Helper()
	rv := &webhookReceiver{}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rv.mu.Lock()
		rv.posts = append(rv.posts, b)
		rv.mu.Unlock()
		if block {
			select {
			case <-release:
			case <-time.After(30 * time.Second):
			}
		}
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	rv.url = srv.URL + "/hook"
	return rv
}

func (rv *webhookReceiver) received() [][]byte {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return append([][]byte(nil), rv.posts...)
}

// runHookWithWebhook runs one Claude Code PreToolUse event for fs's
// write_file (an ask) through `toolwarden hook` with this channel and a
// webhook to rv, and returns its answer and how long it took.
func runHookWithWebhook(t *testing.T, rv *webhookReceiver, channel string, extra ...string) (decision, stdout string, took time.Duration) {
	t.Helper()
	cfg := writeFile(t, "hookwebhook.toml", "approval_channel = \""+channel+"\"\n\n[webhook]\nurl = \""+rv.url+"\"\nsecret_env = \"TW_E2E_HOOK_WEBHOOK_SECRET\"\ntimeout_sec = 60\n")
	rendezvous := filepath.Join(t.TempDir(), "rv")
	if err := os.Mkdir(rendezvous, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string{"hook", "--agent", "claude", "--config", cfg, "--state-dir", t.TempDir(),
		"--approvals", filepath.Join(t.TempDir(), "approvals.json"), "--tools", writeFile(t, "tools.json", "{}")}, extra...)
	cmd := exec.CommandContext(ctx, twBin, args...)
	cmd.Env = append(os.Environ(), inbox.EnvRuntimeDir+"="+rendezvous, "TW_E2E_HOOK_WEBHOOK_SECRET="+hookWebhookSecret,
		"XDG_CONFIG_HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(hookEvent("claude", "hook-webhook", "write_file", dir, map[string]any{"path": filepath.Join(dir, "w.txt"), "content": "x"}))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	took = time.Since(start)
	if err != nil && cmd.ProcessState.ExitCode() != 0 {
		t.Fatalf("hook: %v\n%s\n%s", err, out.String(), errb.String())
	}
	var v struct {
		HookSpecificOutput struct{ PermissionDecision string }
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("hook output %q: %v\n%s", out.String(), err, errb.String())
	}
	return v.HookSpecificOutput.PermissionDecision, out.String() + errb.String(), took
}

func TestAHookAnswersWithinItsBoundWhileTheWebhookReceiverNeverReplies(t *testing.T) {
	t.Parallel()
	rv := newWebhookReceiver(t, true)
	// A half-second ask nobody answers, and a receiver that holds every
	// post for 30 s with timeout_sec = 60: the hook answers after its own
	// 0.5 s plus at most the 1 s grace (and its start, which a loaded
	// machine under -race stretches to seconds), far from the 30 s the
	// receiver holds a post, or the post's 60 s (twice).
	decision, out, took := runHookWithWebhook(t, rv, "inbox", "--approval-timeout", "500ms")
	if decision != "deny" {
		t.Errorf("decision %q, want deny (nobody answered)\n%s", decision, out)
	}
	if took >= 10*time.Second {
		t.Errorf("the hook answered after %v while the receiver held the post for 30s; want under 10s (0.5s ask + 1s grace + start)\n%s", took, out)
	}
	if !strings.Contains(out, "abandoned") {
		t.Errorf("the abandoned post is not logged:\n%s", out)
	}
	if posts := rv.received(); len(posts) == 0 || !bytes.Contains(posts[0], []byte(`"event":"ask"`)) {
		t.Errorf("the receiver got %q, want the ask", posts)
	}
}

func TestAnAskGivenToClaudeCodesDialogReachesTheWebhook(t *testing.T) {
	t.Parallel()
	rv := newWebhookReceiver(t, false)
	decision, out, _ := runHookWithWebhook(t, rv, "elicitation")
	if decision != "ask" {
		t.Fatalf("decision %q, want ask (Claude Code's dialog)\n%s", decision, out)
	}
	posts := rv.received()
	if len(posts) != 1 {
		t.Fatalf("the receiver got %d posts, want the ask:\n%s", len(posts), out)
	}
	var pl struct {
		Event, Origin, Server, Tool, Arguments string
		Channels                               []string
	}
	if err := json.Unmarshal(posts[0], &pl); err != nil {
		t.Fatal(err)
	}
	if pl.Event != "ask" || pl.Origin != "hook" || pl.Server != "fs" || pl.Tool != "write_file" ||
		!strings.Contains(pl.Arguments, "w.txt") || len(pl.Channels) != 1 || pl.Channels[0] != "elicitation" {
		t.Errorf("payload %s", posts[0])
	}
}

func TestTheNoneChannelPostsNothingFromAHook(t *testing.T) {
	t.Parallel()
	rv := newWebhookReceiver(t, false)
	decision, out, _ := runHookWithWebhook(t, rv, "none")
	if decision != "deny" || !strings.Contains(out, "no_approval_channel") {
		t.Fatalf("decision %q, want the refusal\n%s", decision, out)
	}
	// The hook has exited: a post it made would have arrived by now.
	if posts := rv.received(); len(posts) != 0 {
		t.Errorf("the receiver got %q under approval_channel = \"none\"", posts)
	}
}
