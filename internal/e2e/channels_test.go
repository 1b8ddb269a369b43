package e2e

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// Approval channels through the real binary: wrap in front of the npm
// server-filesystem, driven by the official TypeScript client, with asks
// answered in the approval inbox's rendezvous directory as the inbox page
// answers them (inbox.Respond).

// channelSetup is a private rendezvous directory, a folder for
// server-filesystem, and a config file with body.
type channelSetup struct {
	rv, dir, cfg, audit string
	fsBin               string
}

func newChannelSetup(t *testing.T, body string) *channelSetup {
	t.Helper()
	s := &channelSetup{fsBin: npmServer(t, "mcp-server-filesystem")}
	nodeSDK(t)
	s.rv = filepath.Join(t.TempDir(), "rv")
	if err := os.Mkdir(s.rv, 0o700); err != nil {
		t.Fatal(err)
	}
	s.dir, _ = filepath.EvalSymlinks(t.TempDir())
	s.cfg = writeFile(t, "channels.toml", body)
	s.audit = filepath.Join(t.TempDir(), "audit.jsonl")
	return s
}

// script is a tsclient script: the TypeScript client starts wrap (with
// this setup's config, audit log and rendezvous directory) in front of
// server-filesystem and runs steps.
func (s *channelSetup) script(t *testing.T, elicitation bool, answers []string, env map[string]string, steps ...tsStep) map[string]any {
	args := wrapArgs(t, "fs", []string{s.cfg}, s.fsBin, s.dir)
	args = append([]string{args[0], "--audit", s.audit, "--approval-timeout", "2m"}, args[1:]...)
	e := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "TOOLWARDEN_CATALOG": os.Getenv("TOOLWARDEN_CATALOG"), inbox.EnvRuntimeDir: s.rv}
	for k, v := range env {
		e[k] = v
	}
	return map[string]any{"command": twBin, "args": args, "elicitation": elicitation, "answers": answers, "steps": steps, "env": e}
}

// write is a write_file call into the setup's folder: destructive, so
// asked about.
func (s *channelSetup) write(name, content string) tsStep {
	return tsStep{Op: "call", Name: "write_file", Arguments: map[string]any{"path": filepath.Join(s.dir, name), "content": content}}
}

func (s *channelSetup) exists(name string) bool { return fileExists(filepath.Join(s.dir, name)) }

// asks waits until the inbox holds n asks, and returns them.
func (s *channelSetup) asks(t *testing.T, n int) []inbox.Ask {
	t.Helper()
	var asks []inbox.Ask
	eventually(t, 60*time.Second, strconv.Itoa(n)+" asks in the inbox", func() bool {
		var err error
		asks, err = inbox.List(s.rv)
		if err != nil {
			t.Fatal(err)
		}
		return len(asks) == n
	})
	return asks
}

// askFiles counts the ask files in the rendezvous directory.
func (s *channelSetup) askFiles(t *testing.T) int {
	entries, err := os.ReadDir(filepath.Join(s.rv, "asks"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0 // nothing was ever posted
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func (s *channelSetup) auditLog(t *testing.T) string {
	b, err := os.ReadFile(s.audit)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// asyncTS runs the TypeScript client in the background.
type asyncTS struct {
	done chan struct{}
	out  bytes.Buffer
	errb bytes.Buffer
	err  error
}

func startTS(t *testing.T, script map[string]any) *asyncTS {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	a := &asyncTS{done: make(chan struct{})}
	cmd := tsCommand(ctx, nodeSDK(t), "", os.Environ(), script)
	cmd.Stdout, cmd.Stderr = &a.out, &a.errb
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		a.err = cmd.Wait()
		cancel()
		close(a.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-a.done
	})
	return a
}

func (a *asyncTS) wait(t *testing.T) tsResult {
	t.Helper()
	<-a.done
	if a.err != nil {
		t.Fatalf("tsclient: %v\nstdout: %s\nstderr: %s", a.err, a.out.String(), a.errb.String())
	}
	var res tsResult
	if err := json.Unmarshal(a.out.Bytes(), &res); err != nil {
		t.Fatalf("tsclient output: %v\n%s\nstderr: %s", err, a.out.String(), a.errb.String())
	}
	return res
}

// respond answers ask id as the inbox page does.
func respond(t *testing.T, dir, id, option string) {
	t.Helper()
	if err := inbox.Respond(dir, id, option, "inbox"); err != nil {
		t.Fatal(err)
	}
}

func TestInboxChannelAnswersAsksFromTheInbox(t *testing.T) {
	t.Parallel()
	s := newChannelSetup(t, "[mcp_servers.fs]\ncommand = \"unused\"\napproval_channel = \"inbox\"\n")
	// The client could elicit, but the channel is the inbox alone: it is
	// never asked.
	run := startTS(t, s.script(t, true, nil, nil, s.write("allowed.txt", "yes"), s.write("denied.txt", "no")))

	a := s.asks(t, 1)[0]
	if a.Origin != "wrap" || a.Server != "fs" || a.Tool != "write_file" || !strings.Contains(a.Arguments, "allowed.txt") || len(a.Digest) != 64 || !a.Offers("deny") {
		t.Fatalf("ask %+v", a)
	}
	respond(t, s.rv, a.ID, "allow_once")
	var b inbox.Ask
	eventually(t, 60*time.Second, "the second ask", func() bool {
		b = s.asks(t, 1)[0]
		return b.ID != a.ID
	})
	if !strings.Contains(b.Arguments, "denied.txt") {
		t.Fatalf("second ask %+v", b)
	}
	respond(t, s.rv, b.ID, "deny")

	res := run.wait(t)
	if r := res.Results[0]; r.IsError || !s.exists("allowed.txt") {
		t.Errorf("allowed in the inbox: %+v", r)
	}
	if r := res.Results[1]; !r.IsError || !strings.Contains(r.Text, "the user denied") || s.exists("denied.txt") {
		t.Errorf("denied in the inbox: %+v", r)
	}
	if len(res.Asked) != 0 {
		t.Errorf("the client was asked %d times", len(res.Asked))
	}
	if n := s.askFiles(t); n != 0 {
		t.Errorf("%d ask files left", n)
	}
	log := s.auditLog(t)
	mustContain(t, log, `"channel":"inbox","outcome":"answered","option":"allow_once","by":"inbox"`)
	mustContain(t, log, `"channel":"inbox","outcome":"answered","option":"deny","by":"inbox"`)
}

func TestNoneChannelDeniesEveryAskAtOnceWithTheReason(t *testing.T) {
	t.Parallel()
	s := newChannelSetup(t, "approval_channel = \"none\"\n")
	// With a two-minute approval timeout, a call that waited would hold
	// the client past the test's end: it returns because nothing waits.
	res := runTSClientScript(t, s.script(t, true, []string{"allow_once"}, nil,
		s.write("never.txt", "x"),
		tsStep{Op: "call", Name: "list_allowed_directories"}))
	r := res.Results[0]
	if !r.IsError || s.exists("never.txt") {
		t.Fatalf("write under none: %+v", r)
	}
	mustContain(t, r.Text, `approval_channel = "none" at `+s.cfg+`:1:1`)
	mustContain(t, r.Text, "[no_approval_channel]")
	if len(res.Asked) != 0 {
		t.Errorf("the client was asked")
	}
	if r := res.Results[1]; r.IsError {
		t.Errorf("a call that needs no approval is refused: %+v", r)
	}
	if n := s.askFiles(t); n != 0 {
		t.Errorf("%d asks posted", n)
	}
	mustContain(t, s.auditLog(t), `"channel":"none","outcome":"refused"`)
}

// runTSClientScript runs a whole script in the foreground.
func runTSClientScript(t *testing.T, script map[string]any) tsResult {
	t.Helper()
	res, _ := runTSClient(t, nodeSDK(t), "", os.Environ(), script)
	return res
}

func TestBothChannelsTheFirstAnswerWinsAndTheOtherIsWithdrawn(t *testing.T) {
	t.Parallel()
	t.Run("the inbox answers while the client's prompt stays open", func(t *testing.T) {
		t.Parallel()
		s := newChannelSetup(t, "[apps._default]\napproval_channel = \"both\"\n")
		run := startTS(t, s.script(t, true, []string{"hold"}, nil, s.write("inbox-won.txt", "x")))
		a := s.asks(t, 1)[0]
		respond(t, s.rv, a.ID, "allow_once")
		res := run.wait(t)
		if r := res.Results[0]; r.IsError || !s.exists("inbox-won.txt") {
			t.Fatalf("call: %+v", r)
		}
		// The prompt may not even have reached the client when the inbox
		// answered; it is never answered by it.
		if len(res.Asked) > 1 {
			t.Errorf("the client was asked %d times, want at most once", len(res.Asked))
		}
		if n := s.askFiles(t); n != 0 {
			t.Errorf("%d ask files left", n)
		}
		log := s.auditLog(t)
		mustContain(t, log, `"channel":"inbox","outcome":"answered","option":"allow_once"`)
		mustContain(t, log, `"channel":"elicitation","outcome":"withdrawn"`)
	})
	t.Run("the client answers and the inbox ask disappears", func(t *testing.T) {
		t.Parallel()
		s := newChannelSetup(t, "approval_channel = \"both\"\n")
		res := runTSClientScript(t, s.script(t, true, []string{"deny"}, nil, s.write("client-won.txt", "x")))
		if r := res.Results[0]; !r.IsError || !strings.Contains(r.Text, "the user denied") || s.exists("client-won.txt") {
			t.Fatalf("call: %+v", r)
		}
		if n := s.askFiles(t); n != 0 {
			t.Errorf("%d ask files left", n)
		}
		log := s.auditLog(t)
		mustContain(t, log, `"channel":"inbox","outcome":"posted"`)
		mustContain(t, log, `"channel":"elicitation","outcome":"answered","option":"deny"`)
		mustContain(t, log, `"channel":"inbox","outcome":"withdrawn"`)
	})
	t.Run("a client that cannot elicit waits on the inbox instead of failing", func(t *testing.T) {
		t.Parallel()
		s := newChannelSetup(t, "approval_channel = \"both\"\n")
		run := startTS(t, s.script(t, false, nil, nil, s.write("no-elicit.txt", "x")))
		respond(t, s.rv, s.asks(t, 1)[0].ID, "allow_once")
		if r := run.wait(t).Results[0]; r.IsError || !s.exists("no-elicit.txt") {
			t.Fatalf("call: %+v", r)
		}
	})
}

func TestTwoAsksFromTwoProcessesAreAnsweredApart(t *testing.T) {
	t.Parallel()
	s := newChannelSetup(t, "approval_channel = \"inbox\"\n")
	one := startTS(t, s.script(t, false, nil, nil, s.write("one.txt", "1")))
	two := startTS(t, s.script(t, false, nil, nil, s.write("two.txt", "2")))
	asks := s.asks(t, 2)
	if asks[0].PID == asks[1].PID || asks[0].Session == asks[1].Session {
		t.Fatalf("the asks do not come from two processes: %+v", asks)
	}
	for _, a := range asks {
		if strings.Contains(a.Arguments, "one.txt") {
			respond(t, s.rv, a.ID, "deny")
		} else {
			respond(t, s.rv, a.ID, "allow_once")
		}
	}
	if r := one.wait(t).Results[0]; !r.IsError || s.exists("one.txt") {
		t.Errorf("one (denied): %+v", r)
	}
	if r := two.wait(t).Results[0]; r.IsError || !s.exists("two.txt") {
		t.Errorf("two (allowed): %+v", r)
	}
}

// TestTheWebhookGetsASignedAskWithAnAnswerLink: a local receiver checks
// the signature as the docs describe it, and the one-time link it gets
// answers the ask through the inbox.
func TestTheWebhookGetsASignedAskWithAnAnswerLink(t *testing.T) {
	t.Parallel()
	const secret = "e2e-webhook-secret"
	type received struct {
		header http.Header
		body   []byte
	}
	var (
		mu    sync.Mutex
		posts []received
	)
	rv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		posts = append(posts, received{r.Header.Clone(), b})
		mu.Unlock()
	}))
	defer rv.Close()
	s := newChannelSetup(t, "approval_channel = \"inbox\"\n\n[webhook]\nurl = \""+rv.URL+"/hook\"\nsecret_env = \"TW_E2E_WEBHOOK_SECRET\"\n")
	// An inbox runs: the real page, on a free loopback port.
	page := exec.Command(twBin, "inbox", "--open=false", "--approvals", filepath.Join(t.TempDir(), "approvals.json"))
	page.Env = append(os.Environ(), inbox.EnvRuntimeDir+"="+s.rv)
	pageLog := newLog(t, "toolwarden inbox")
	page.Stdout, page.Stderr = pageLog, pageLog
	if err := page.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		page.Process.Kill()
		page.Wait()
	})
	var running inbox.Info
	eventually(t, 60*time.Second, "toolwarden inbox to announce itself", func() bool {
		var err error
		running, err = inbox.Running(s.rv)
		return err == nil
	})

	run := startTS(t, s.script(t, false, nil, map[string]string{"TW_E2E_WEBHOOK_SECRET": secret}, s.write("linked.txt", "x")))
	a := s.asks(t, 1)[0]
	var got received
	eventually(t, 60*time.Second, "the webhook post", func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(posts) > 0 {
			got = posts[0]
		}
		return len(posts) > 0
	})

	ts := got.header.Get("X-Toolwarden-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		t.Fatalf("timestamp %q", ts)
	}
	verify := func(body []byte) bool {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(ts + "."))
		m.Write(body)
		return hmac.Equal([]byte("sha256="+hex.EncodeToString(m.Sum(nil))), []byte(got.header.Get("X-Toolwarden-Signature")))
	}
	if !verify(got.body) {
		t.Fatalf("bad signature %q", got.header.Get("X-Toolwarden-Signature"))
	}
	if verify(bytes.Replace(got.body, []byte("linked.txt"), []byte("linkex.txt"), 1)) {
		t.Fatal("a tampered body verifies")
	}
	var pl struct {
		Event, ID, Server, Tool, Arguments, Digest, Session, AnswerURL string
		AnswerURLSnake                                                 string `json:"answer_url"`
		Options                                                        []inbox.Option
		Expires                                                        time.Time
	}
	if err := json.Unmarshal(got.body, &pl); err != nil {
		t.Fatal(err)
	}
	if pl.Event != "ask" || pl.ID != a.ID || pl.Server != "fs" || pl.Tool != "write_file" || pl.Digest != a.Digest || pl.Arguments != a.Arguments || pl.Session != a.Session || len(pl.Options) == 0 || pl.Expires.IsZero() {
		t.Fatalf("payload %s\nask %+v", got.body, a)
	}
	link, err := url.Parse(pl.AnswerURLSnake)
	if err != nil || "http://"+link.Host != running.URL || link.Path != "/a/"+a.ID || link.Query().Get("k") == "" {
		t.Fatalf("answer_url %q (inbox at %s)", pl.AnswerURLSnake, running.URL)
	}
	// What the page opened from the link does: answer with its key, once.
	answer := func(option string) int {
		body, _ := json.Marshal(map[string]string{"k": link.Query().Get("k"), "option": option})
		req, _ := http.NewRequest(http.MethodPost, running.URL+"/api/link/"+a.ID, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", running.URL)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := answer("allow_once"); code/100 != 2 {
		t.Fatalf("answering through the link: HTTP %d", code)
	}
	if code := answer("deny"); code/100 == 2 {
		t.Fatal("the link answered twice")
	}
	if r := run.wait(t).Results[0]; r.IsError || !s.exists("linked.txt") {
		t.Fatalf("call: %+v", r)
	}
	mustContain(t, s.auditLog(t), `"channel":"inbox","outcome":"answered","option":"allow_once","by":"webhook-link"`)
	mustContain(t, s.auditLog(t), `"channel":"webhook","outcome":"sent"`)
}

func TestAHookAskWithTheInboxChannelWaitsForTheAnswer(t *testing.T) {
	t.Parallel()
	s := newChannelSetup(t, "approval_channel = \"inbox\"\n")
	for _, tc := range []struct{ option, want string }{{"allow_once", "allow"}, {"deny", "deny"}} {
		cmd := exec.Command(twBin, "hook", "--agent", "claude", "--config", s.cfg, "--state-dir", t.TempDir(),
			"--approvals", filepath.Join(t.TempDir(), "approvals.json"), "--audit", s.audit, "--approval-timeout", "2m")
		cmd.Env = append(os.Environ(), inbox.EnvRuntimeDir+"="+s.rv)
		cmd.Stdin = strings.NewReader(hookEvent("claude", "hook-"+tc.option, "write_file", s.dir, map[string]any{"path": filepath.Join(s.dir, "h.txt"), "content": "x"}))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		a := s.asks(t, 1)[0]
		if a.Origin != "hook" || a.Server != "fs" || a.Tool != "write_file" || a.Session != "hook-"+tc.option {
			t.Errorf("ask %+v", a)
		}
		respond(t, s.rv, a.ID, tc.option)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("hook: %v\n%s\n%s", err, out.String(), errb.String())
		}
		var v struct {
			HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string }
		}
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("hook output %q: %v", out.String(), err)
		}
		if v.HookSpecificOutput.PermissionDecision != tc.want || !strings.Contains(v.HookSpecificOutput.PermissionDecisionReason, "approval inbox") {
			t.Errorf("%s: %+v", tc.option, v.HookSpecificOutput)
		}
		if n := s.askFiles(t); n != 0 {
			t.Errorf("%d ask files left", n)
		}
	}
}

// A 2026-07-28 client (mcp-go, multi round-trip): under "inbox" the call
// is held while the inbox answers; under "both", an input request asks it
// and nothing goes to the inbox (the answer comes on a retry, which cannot
// wait on the inbox as well).
func TestAModernClientWithTheInboxChannel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		channel string
		inbox   bool
	}{{"inbox", true}, {"both", false}} {
		t.Run(tc.channel, func(t *testing.T) {
			t.Parallel()
			rv := filepath.Join(t.TempDir(), "rv")
			if err := os.Mkdir(rv, 0o700); err != nil {
				t.Fatal(err)
			}
			cfg := writeFile(t, "modern.toml", "approval_channel = \""+tc.channel+"\"\n")
			ask := answers("allow_once")
			// env(1) hands wrap the rendezvous directory.
			args := append([]string{inbox.EnvRuntimeDir + "=" + rv, twBin}, wrapArgs(t, "ts", []string{cfg}, testServer, "-state", t.TempDir())...)
			c := startGo(t, false, ask, "env", args...)
			type result struct {
				out   string
				isErr bool
			}
			done := make(chan result, 1)
			go func() {
				out, isErr := c.call(t, "write", map[string]any{"what": "a"})
				done <- result{out, isErr}
			}()
			if tc.inbox {
				var asks []inbox.Ask
				eventually(t, 60*time.Second, "the ask in the inbox", func() bool {
					asks, _ = inbox.List(rv)
					return len(asks) == 1
				})
				respond(t, rv, asks[0].ID, "allow_once")
			}
			r := <-done
			if r.isErr || r.out != "wrote a" {
				t.Fatalf("call: %q (error %v)", r.out, r.isErr)
			}
			if asked := ask.count() == 1; asked == tc.inbox {
				t.Errorf("the client was asked %d times", ask.count())
			}
			// (Before List, which makes the directory.)
			if _, err := os.Stat(filepath.Join(rv, "asks")); !tc.inbox && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the input request also went to the inbox (%v)", err)
			}
			if asks, _ := inbox.List(rv); len(asks) != 0 {
				t.Errorf("asks left in the inbox: %v", asks)
			}
		})
	}
}
