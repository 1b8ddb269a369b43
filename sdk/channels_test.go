package sdk_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/testkit"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/sdk"
)

// privateInbox points this process's inbox at a fresh directory. Tests
// using it cannot run in parallel (the directory is an env var).
func privateInbox(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rv")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv(inbox.EnvRuntimeDir, dir)
	return dir
}

// answerInbox waits for the one ask in dir and answers it with option.
func answerInbox(t *testing.T, dir, option string) inbox.Ask {
	t.Helper()
	for i := 0; ; i++ {
		asks, err := inbox.List(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(asks) == 1 {
			if err := inbox.Respond(dir, asks[0].ID, option, "inbox"); err != nil {
				t.Fatal(err)
			}
			return asks[0]
		}
		if i > 2000 {
			t.Fatalf("the inbox holds %d asks, want 1", len(asks))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type callResult struct {
	text  string
	isErr bool
}

func callAsync(t *testing.T, g *sdk.Guard, f *files) <-chan callResult {
	out := make(chan callResult, 1)
	c := g.Client("fs", f.connect(t))
	go func() {
		text, isErr := call(t, c, "write_file", map[string]any{"path": "/a.txt", "content": "x"})
		out <- callResult{text, isErr}
	}()
	return out
}

func TestTheInboxApproverAnswersFromTheInbox(t *testing.T) {
	for _, tc := range []struct {
		option string
		runs   bool
	}{{"allow_once", true}, {"deny", false}} {
		t.Run(tc.option, func(t *testing.T) {
			dir := privateInbox(t)
			f := newFiles()
			g := sdk.New(testhost.New(t, "", host.Defaults()), sdk.WithApprover(sdk.Inbox(time.Hour)))
			done := callAsync(t, g, f)
			a := answerInbox(t, dir, tc.option)
			got := <-done
			if a.Origin != "sdk" || a.Server != "fs" || a.Tool != "write_file" || !strings.Contains(a.Arguments, `content = "x"`) {
				t.Errorf("ask %+v", a)
			}
			if ran := len(f.ran()) == 1; ran != tc.runs || got.isErr == tc.runs {
				t.Fatalf("ran %v, result %+v", f.ran(), got)
			}
			if asks, _ := inbox.List(dir); len(asks) != 0 {
				t.Errorf("the ask is still pending: %v", asks)
			}
		})
	}
}

func TestTheGuardFollowsApprovalChannel(t *testing.T) {
	t.Run("none denies with the setting and where, asking nobody", func(t *testing.T) {
		dir := privateInbox(t)
		f := newFiles()
		a := &recorder{answer: sdk.AllowOnce}
		g := sdk.New(testhost.New(t, "approval_channel = \"none\"\n", host.Defaults()), sdk.WithApprover(a))
		out, isErr := call(t, g.Client("fs", f.connect(t)), "write_file", map[string]any{"path": "/a.txt", "content": "x"})
		if !isErr || !strings.Contains(out, `approval_channel = "none" at config.toml:1:1`) || !strings.Contains(out, "no_approval_channel") {
			t.Fatalf("result %q (error %v)", out, isErr)
		}
		if len(a.asked()) != 0 || len(f.ran()) != 0 {
			t.Errorf("asked %d, ran %v", len(a.asked()), f.ran())
		}
		if asks, _ := inbox.List(dir); len(asks) != 0 {
			t.Errorf("posted %v", asks)
		}
	})
	t.Run("inbox needs no approver and records which channel answered", func(t *testing.T) {
		dir := privateInbox(t)
		f := newFiles()
		audit := &testkit.Buffer{}
		g := sdk.New(testhost.New(t, "[mcp_servers.fs]\ncommand = \"x\"\napproval_channel = \"inbox\"\n", host.Defaults().WithAuditLog(audit)))
		done := callAsync(t, g, f)
		answerInbox(t, dir, "allow_once")
		if got := <-done; got.isErr || len(f.ran()) != 1 {
			t.Fatalf("result %+v, ran %v", got, f.ran())
		}
		if log := audit.String(); !strings.Contains(log, `"event":"channel"`) || !strings.Contains(log, `"channel":"inbox","outcome":"answered","option":"allow_once","by":"inbox"`) {
			t.Errorf("audit log:\n%s", log)
		}
	})
	t.Run("both: the inbox answering first withdraws the approver's question", func(t *testing.T) {
		dir := privateInbox(t)
		f := newFiles()
		withdrawn := make(chan error, 1)
		slow := sdk.ApproverFunc(func(ctx context.Context, q *sdk.Question) (sdk.Answer, error) {
			<-ctx.Done()
			withdrawn <- ctx.Err()
			return sdk.Deny, ctx.Err()
		})
		g := sdk.New(testhost.New(t, "[apps._default]\napproval_channel = \"both\"\n", host.Defaults()), sdk.WithApprover(slow))
		done := callAsync(t, g, f)
		answerInbox(t, dir, "allow_once")
		if got := <-done; got.isErr || len(f.ran()) != 1 {
			t.Fatalf("result %+v, ran %v", got, f.ran())
		}
		if err := <-withdrawn; err == nil {
			t.Error("the approver's context was not cancelled")
		}
	})
	t.Run("both: the approver answering first withdraws the inbox ask", func(t *testing.T) {
		dir := privateInbox(t)
		f := newFiles()
		a := &recorder{answer: sdk.Deny}
		g := sdk.New(testhost.New(t, "approval_channel = \"both\"\n", host.Defaults()), sdk.WithApprover(a))
		out, isErr := call(t, g.Client("fs", f.connect(t)), "write_file", map[string]any{"path": "/a.txt", "content": "x"})
		if !isErr || !strings.Contains(out, "the user denied") || len(f.ran()) != 0 {
			t.Fatalf("result %q, ran %v", out, f.ran())
		}
		if asks, _ := inbox.List(dir); len(asks) != 0 {
			t.Errorf("the inbox ask was not withdrawn: %v", asks)
		}
	})
	t.Run("an inbox nobody answers denies when the timeout ends", func(t *testing.T) {
		privateInbox(t)
		f := newFiles()
		g := sdk.New(testhost.New(t, "approval_channel = \"inbox\"\n", host.Defaults()), sdk.WithApprovalTimeout(50*time.Millisecond))
		out, isErr := call(t, g.Client("fs", f.connect(t)), "write_file", map[string]any{"path": "/a.txt", "content": "x"})
		if !isErr || !strings.Contains(out, "no answer within 50ms") || len(f.ran()) != 0 {
			t.Fatalf("result %q, ran %v", out, f.ran())
		}
	})
	t.Run("a requirements pin beats the user's channel and says where it was required", func(t *testing.T) {
		dir := privateInbox(t)
		f := newFiles()
		user, err := config.LoadBytes("config.toml", []byte("approval_channel = \"inbox\"\n"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := config.ParseRequirements("admin.toml", []byte("approval_channel = \"none\"\n"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := user.ApplyRequirements(r)
		if err != nil {
			t.Fatal(err)
		}
		h, err := host.New(context.Background(), cfg, host.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(context.Background())
		out, isErr := call(t, sdk.New(h).Client("fs", f.connect(t)), "write_file", map[string]any{"path": "/a.txt", "content": "x"})
		if !isErr || !strings.Contains(out, `approval_channel = "none" required by admin.toml:1:1`) || len(f.ran()) != 0 {
			t.Fatalf("result %q, ran %v", out, f.ran())
		}
		if asks, _ := inbox.List(dir); len(asks) != 0 {
			t.Errorf("the user's inbox channel was used: %v", asks)
		}
	})
	t.Run("elicitation without an approver says how to be asked", func(t *testing.T) {
		f := newFiles()
		g := sdk.New(testhost.New(t, "[webhook]\nurl = \"http://127.0.0.1:9/\"\nsecret_env = \"TW_UNSET_SECRET\"\n", host.Defaults()))
		out, isErr := call(t, g.Client("fs", f.connect(t)), "write_file", map[string]any{"path": "/a.txt", "content": "x"})
		if !isErr || !strings.Contains(out, "no approver") || len(f.ran()) != 0 {
			t.Fatalf("result %q, ran %v", out, f.ran())
		}
	})
}
