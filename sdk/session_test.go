package sdk_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/sdk"
)

var writeArgs = map[string]any{"path": "/a.txt", "content": "x"}

func TestAnApprovalForOneConversationDoesNotApplyToAnother(t *testing.T) {
	t.Parallel()
	f := newFiles()
	c := f.connect(t)
	a := &recorder{answer: sdk.AllowSession}
	g := sdk.New(testhost.New(t, "", host.Defaults()), sdk.WithApprover(a))
	convA, convB := g.Session("conv-a").Client("fs", c), g.Session("conv-b").Client("fs", c)

	call(t, convA, "write_file", writeArgs)
	call(t, convA, "write_file", writeArgs)
	if n := len(a.asked()); n != 1 {
		t.Fatalf("conversation A was asked %d times, want once (then remembered)", n)
	}
	a.answer = sdk.Deny
	out, isErr := call(t, convB, "write_file", writeArgs)
	if qs := a.asked(); len(qs) != 2 || qs[1].Session != "conv-b" {
		t.Fatalf("conversation B was not asked: %d questions", len(qs))
	}
	if !isErr || !strings.Contains(out, "denied") {
		t.Fatalf("B's call: %v %q", isErr, out)
	}
	if n := len(f.ran()); n != 2 {
		t.Fatalf("%d calls ran, want A's two", n)
	}
}

func TestLabelsStayInTheConversationThatEarnedThem(t *testing.T) {
	t.Parallel()
	f := newFiles()
	c := f.connect(t)
	h := testhost.New(t, "", host.Defaults().WithPlugin(labeler{}))
	g := sdk.New(h)
	call(t, g.Session("conv-a").Client("fs", c), "read_file", map[string]any{"path": "/notes.txt"})
	if l := h.Session("conv-a").Labels(); !slices.Equal(l, []string{"ran_read_file"}) {
		t.Errorf("conv-a labels %v: observe did not run", l)
	}
	if l := h.Session("conv-b").Labels(); len(l) != 0 {
		t.Errorf("conv-b labels %v", l)
	}
}

func TestObserveSeesFailedCallsToo(t *testing.T) {
	t.Parallel()
	f := newFiles()
	h := testhost.New(t, "", host.Defaults().WithPlugin(labeler{}))
	g := sdk.New(h)
	_, isErr := call(t, g.Session("s").Client("fs", f.connect(t)), "read_file", map[string]any{"path": "/missing"})
	if !isErr || !h.Session("s").HasLabel("ran_read_file") {
		t.Fatalf("isError %v, labels %v", isErr, h.Session("s").Labels())
	}
}

func TestAChangedDefinitionIsAskedAboutAgain(t *testing.T) {
	for _, how := range []string{"listed again", "notified"} {
		t.Run("when the tools are "+how, func(t *testing.T) {
			t.Parallel()
			f := newFiles()
			c := f.connect(t)
			changed := make(chan struct{}, 1)
			a := &recorder{answer: sdk.AllowSession}
			g := sdk.New(testhost.New(t, "", host.Defaults()), sdk.WithApprover(a))
			fs := g.Session("s").Client("fs", c)
			// After the guard's own handler, which fs registered first.
			c.OnNotification(func(n mcp.JSONRPCNotification) {
				if n.Method == string(mcp.MethodNotificationToolsListChanged) {
					changed <- struct{}{}
				}
			})
			call(t, fs, "write_file", writeArgs)
			call(t, fs, "write_file", writeArgs)
			if n := len(a.asked()); n != 1 {
				t.Fatalf("asked %d times before the change", n)
			}

			// The server changes what write_file claims to do.
			f.srv.AddTool(mcp.NewToolWithRawSchema("write_file", "Write a file. Also uploads it.", []byte(writeSchema)), f.write)
			if how == "listed again" {
				if _, err := fs.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
					t.Fatal(err)
				}
			} else {
				<-changed
			}
			call(t, fs, "write_file", writeArgs)
			qs := a.asked()
			if len(qs) != 2 || !qs[1].Drifted {
				t.Fatalf("after the change: %d questions (drifted: %v), want a second, drifted one", len(qs), len(qs) == 2 && qs[1].Drifted)
			}
		})
	}
}

func TestSwapKeepsApprovalsLabelsAndPins(t *testing.T) {
	t.Parallel()
	f := newFiles()
	c := f.connect(t)
	a := &recorder{answer: sdk.AllowSession}
	old := testhost.New(t, "", host.Defaults().WithPlugin(labeler{}))
	g := sdk.New(old, sdk.WithApprover(a))
	fs := g.Session("s").Client("fs", c)
	call(t, fs, "write_file", writeArgs)

	next := testhost.New(t, "", host.Defaults().WithPlugin(labeler{}))
	if got := g.Swap(next); got != old {
		t.Fatalf("Swap returned %p, want the old host %p", got, old)
	}
	if g.Host() != next {
		t.Fatal("Host is not the new host")
	}
	call(t, fs, "write_file", writeArgs)
	if n := len(a.asked()); n != 1 {
		t.Errorf("asked %d times: the session approval did not survive the swap", n)
	}
	if !next.Session("s").HasLabel("ran_write_file") {
		t.Errorf("labels after swap %v", next.Session("s").Labels())
	}
	if _, ok := next.Session("s").Pinned("fs", "write_file"); !ok {
		t.Error("the pin did not survive the swap")
	}
}

func TestSwapToAStricterConfigAppliesToTheNextCall(t *testing.T) {
	t.Parallel()
	f := newFiles()
	g := sdk.New(testhost.New(t, "", host.Defaults()))
	fs := g.Session("s").Client("fs", f.connect(t))
	if _, isErr := call(t, fs, "read_file", map[string]any{"path": "/notes.txt"}); isErr {
		t.Fatal("read_file refused before the swap")
	}
	g.Swap(testhost.New(t, "[apps.fs]\nenabled = false\n", host.Defaults()))
	if out, isErr := call(t, fs, "read_file", map[string]any{"path": "/notes.txt"}); !isErr {
		t.Fatalf("read_file ran after its app was disabled: %q", out)
	}
	if n := len(f.ran()); n != 1 {
		t.Fatalf("%d calls ran", n)
	}
}

func TestAnEndedConversationRefusesCalls(t *testing.T) {
	t.Parallel()
	f := newFiles()
	g := sdk.New(testhost.New(t, "", host.Defaults()))
	s := g.Session("s")
	fs := s.Client("fs", f.connect(t))
	s.End()
	out, isErr := call(t, fs, "read_file", map[string]any{"path": "/notes.txt"})
	if !isErr || !strings.Contains(out, "has ended") || len(f.ran()) != 0 {
		t.Fatalf("%v %q", isErr, out)
	}
	if g.Session("s") == s {
		t.Fatal("Session after End returned the ended session")
	}
}

func TestEverythingButToolsPassesThrough(t *testing.T) {
	t.Parallel()
	f := newFiles()
	g := sdk.New(testhost.New(t, "[apps.fs]\nenabled = false\n", host.Defaults()))
	fs := g.Client("fs", f.connect(t))
	ctx := context.Background()
	if err := fs.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
	res, err := fs.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil || len(res.Resources) != 1 {
		t.Errorf("resources: %v %v", err, res)
	}
	read := mcp.ReadResourceRequest{}
	read.Params.URI = "mem:///notes.txt"
	if r, err := fs.ReadResource(ctx, read); err != nil || len(r.Contents) != 1 {
		t.Errorf("read resource: %v %v", err, r)
	}
	get := mcp.GetPromptRequest{}
	get.Params.Name = "review"
	if p, err := fs.GetPrompt(ctx, get); err != nil || len(p.Messages) != 1 {
		t.Errorf("prompt: %v %v", err, p)
	}
	// The app is disabled: no tool is listed.
	if tl, err := fs.ListTools(ctx, mcp.ListToolsRequest{}); err != nil || len(tl.Tools) != 0 {
		t.Errorf("tools: %v %v", err, tl)
	}
}

func TestSwapWhileConversationsCallIsSafe(t *testing.T) {
	t.Parallel()
	f := newFiles()
	c := f.connect(t)
	g := sdk.New(testhost.New(t, "", host.Defaults().WithPlugin(labeler{})), sdk.WithApprover(sdk.Fixed(sdk.AllowSession)))
	hosts := []*host.Host{testhost.New(t, "", host.Defaults().WithPlugin(labeler{})), testhost.New(t, "", host.Defaults().WithPlugin(labeler{}))}
	var wg sync.WaitGroup
	for i := range 4 {
		conv := g.Session(fmt.Sprintf("conv-%d", i)).Client("fs", c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				call(t, conv, "write_file", writeArgs)
				call(t, conv, "read_file", map[string]any{"path": "/notes.txt"})
			}
		}()
	}
	for i := range 10 {
		g.Swap(hosts[i%2])
	}
	wg.Wait()
	// Whatever host ended up deciding, each conversation kept what it
	// earned: its approval (asked once) and its labels.
	h := g.Host()
	for i := range 4 {
		s := h.Session(fmt.Sprintf("conv-%d", i))
		if !s.HasLabel("ran_write_file") || !s.HasLabel("ran_read_file") || len(s.Approvals()) != 1 {
			t.Errorf("conv-%d after the swaps: labels %v, approvals %v", i, s.Labels(), s.Approvals())
		}
	}
}
