package sdk_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/sdk"
)

// hideDelete is a config that hides delete_file on server fs.
const hideDelete = `
[apps.fs.tools.delete_file]
enabled = false
`

func TestListToolsReturnsTheVisibleToolsAsTheServerDefinedThem(t *testing.T) {
	t.Parallel()
	f := newFiles()
	c := f.connect(t)
	g := sdk.New(testhost.New(t, hideDelete, host.Defaults()))
	ctx := context.Background()

	raw, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.Client("fs", c).ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if n := names(got.Tools); !slices.Equal(n, []string{"read_file", "write_file"}) {
		t.Fatalf("listed %v, want read_file and write_file (delete_file is hidden)", n)
	}
	for _, tl := range got.Tools {
		i := slices.IndexFunc(raw.Tools, func(r mcp.Tool) bool { return r.Name == tl.Name })
		if !reflect.DeepEqual(tl, raw.Tools[i]) {
			t.Errorf("%s changed on its way through the guard:\n got %#v\nwant %#v", tl.Name, tl, raw.Tools[i])
		}
	}
}

func TestCallsAreDecidedAndOnlyAllowedOnesRun(t *testing.T) {
	t.Parallel()
	write := map[string]any{"path": "/a.txt", "content": "x"}
	cases := []struct {
		name   string
		tool   string
		args   map[string]any
		answer sdk.Answer
		err    error
		runs   bool
		asked  bool
		saying string
	}{
		{name: "a read-only call runs without asking", tool: "read_file", args: map[string]any{"path": "/notes.txt"}, runs: true},
		{name: "a hidden tool is denied without asking and does not run", tool: "delete_file", args: map[string]any{"path": "/notes.txt"}, saying: "blocked by app configuration"},
		{name: "a destructive call allowed once runs", tool: "write_file", args: write, answer: sdk.AllowOnce, asked: true, runs: true},
		{name: "a destructive call the human denies does not run", tool: "write_file", args: write, answer: sdk.Deny, asked: true, saying: "the user denied this call to write_file"},
		{name: "an approver that fails denies", tool: "write_file", args: write, answer: sdk.AllowOnce, err: errors.New("ui gone"), asked: true, saying: "ui gone"},
		{name: "an answer that was not offered denies", tool: "write_file", args: write, answer: sdk.AllowAlways, asked: true, saying: `"always" was not offered`},
		{name: "a made-up answer denies", tool: "write_file", args: write, answer: "yes please", asked: true, saying: "was not offered"},
		{name: "an unknown tool is refused", tool: "format_disk", args: nil, saying: `there is no tool "format_disk"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFiles()
			a := &recorder{answer: tc.answer, err: tc.err}
			g := sdk.New(testhost.New(t, hideDelete, host.Defaults()), sdk.WithApprover(a))
			out, isErr := call(t, g.Client("fs", f.connect(t)), tc.tool, tc.args)
			if ran := len(f.ran()) > 0; ran != tc.runs {
				t.Fatalf("ran = %v, want %v (result %q)", ran, tc.runs, out)
			}
			if isErr == tc.runs {
				t.Errorf("IsError = %v for %q", isErr, out)
			}
			if !strings.Contains(out, tc.saying) {
				t.Errorf("result %q does not say %q", out, tc.saying)
			}
			if asked := len(a.asked()) > 0; asked != tc.asked {
				t.Errorf("asked = %v, want %v", asked, tc.asked)
			}
		})
	}
}

func TestTheQuestionCarriesWhatTheHumanDecidesOn(t *testing.T) {
	t.Parallel()
	f := newFiles()
	a := &recorder{answer: sdk.Deny}
	g := sdk.New(testhost.New(t, "", host.Defaults()), sdk.WithApprover(a))
	call(t, g.Session("conv-1").Client("fs", f.connect(t)), "write_file", map[string]any{"path": "/etc/passwd", "content": "x"})
	qs := a.asked()
	if len(qs) != 1 {
		t.Fatalf("asked %d questions", len(qs))
	}
	q := qs[0]
	if q.Session != "conv-1" || q.Server != "fs" || q.Tool != "write_file" {
		t.Errorf("question names %s/%s/%s", q.Session, q.Server, q.Tool)
	}
	if string(q.Arguments) != `{"content":"x","path":"/etc/passwd"}` {
		t.Errorf("arguments %s", q.Arguments)
	}
	if !strings.Contains(q.Text, "/etc/passwd") || !strings.Contains(q.Text, "write_file") {
		t.Errorf("text does not show the call:\n%s", q.Text)
	}
	if len(q.Reasons) == 0 || q.Decision == nil || q.Decision.Decision != host.Ask {
		t.Errorf("reasons %v, decision %v", q.Reasons, q.Decision)
	}
	if want := []sdk.Answer{sdk.AllowOnce, sdk.AllowSession, sdk.Deny}; !slices.Equal(q.Options, want) {
		t.Errorf("options %v, want %v (no approvals file: no always)", q.Options, want)
	}
}

func TestTheServerGetsTheArgumentsThatWereDecided(t *testing.T) {
	t.Parallel()
	f := newFiles()
	a := &recorder{answer: sdk.AllowOnce}
	g := sdk.New(testhost.New(t, "", host.Defaults()), sdk.WithApprover(a))
	req := mcp.CallToolRequest{}
	req.Params.Name = "write_file"
	// Raw arguments win over the map, in the guard as in mcp-go's encoder.
	req.Params.Arguments = map[string]any{"path": "/harmless.txt", "content": "x"}
	req.Params.RawArguments = []byte(`{"path":"/etc/shadow","content":"x"}`)
	if _, err := g.Client("fs", f.connect(t)).CallTool(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	asked := string(a.asked()[0].Arguments)
	ran := f.ran()
	if len(ran) != 1 || ran[0] != "write_file "+asked {
		t.Fatalf("asked about %s, server got %v", asked, ran)
	}
}

func TestArgumentsThatAreNotAnObjectAreRefused(t *testing.T) {
	t.Parallel()
	f := newFiles()
	g := sdk.New(testhost.New(t, "", host.Defaults()), sdk.WithApprover(sdk.Fixed(sdk.AllowOnce)))
	for _, raw := range []string{`[1]`, `"x"`, `{"path":`} {
		req := mcp.CallToolRequest{}
		req.Params.Name = "read_file"
		req.Params.RawArguments = []byte(raw)
		res, err := g.Client("fs", f.connect(t)).CallTool(context.Background(), req)
		if err != nil || !res.IsError || !strings.Contains(text(res), "invalid_arguments") {
			t.Errorf("%s: %v %v", raw, err, res)
		}
	}
	if ran := f.ran(); len(ran) != 0 {
		t.Errorf("ran %v", ran)
	}
}

func TestWithoutAnApproverAnAskIsDenied(t *testing.T) {
	t.Parallel()
	f := newFiles()
	g := sdk.New(testhost.New(t, "", host.Defaults()))
	out, isErr := call(t, g.Client("fs", f.connect(t)), "write_file", map[string]any{"path": "/a", "content": "x"})
	if !isErr || !strings.Contains(out, "no approver") || len(f.ran()) != 0 {
		t.Fatalf("%v %q ran=%v", isErr, out, f.ran())
	}
}

func TestACancelledApprovalDenies(t *testing.T) {
	t.Parallel()
	f := newFiles()
	ctx, cancel := context.WithCancel(context.Background())
	// The approver says yes, but the call was cancelled meanwhile.
	a := sdk.ApproverFunc(func(context.Context, *sdk.Question) (sdk.Answer, error) { cancel(); return sdk.AllowOnce, nil })
	g := sdk.New(testhost.New(t, "", host.Defaults()), sdk.WithApprover(a))
	c := g.Client("fs", f.connect(t))
	if _, err := c.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "write_file"
	req.Params.Arguments = map[string]any{"path": "/a", "content": "x"}
	res, err := c.CallTool(ctx, req)
	if err != nil || !res.IsError || !strings.Contains(text(res), "context canceled") || len(f.ran()) != 0 {
		t.Fatalf("%v %q ran=%v", err, text(res), f.ran())
	}
}

// contextProbe is a Go plugin that reports the server context a call
// carried, as its deny reason.
type contextProbe struct{}

func (contextProbe) Name() string               { return "probe" }
func (contextProbe) Matches(app, t string) bool { return true }
func (contextProbe) CanApprove() bool           { return false }
func (contextProbe) Check(ctx context.Context, in *policy.CheckInput) policy.PluginVerdict {
	cwd := "unknown"
	if in.Context != nil && in.Context.Cwd != "" {
		cwd = in.Context.Cwd
	}
	return policy.PluginVerdict{Verdict: policy.Deny, Code: "probe", Reason: "cwd " + cwd}
}

func TestCallsCarryTheServerContextTheAgentGave(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, "", host.Defaults().WithPlugin(contextProbe{}))
	f := newFiles()
	c := f.connect(t)
	args := map[string]any{"path": "notes.txt"}

	with := sdk.New(h, sdk.WithServerContext("fs", &host.ServerContext{Cwd: "/srv/data"}))
	if out, _ := call(t, with.Client("fs", c), "read_file", args); !strings.Contains(out, "cwd /srv/data") {
		t.Errorf("with a context: %q", out)
	}
	without := sdk.New(h)
	if out, _ := call(t, without.Client("fs", c), "read_file", args); !strings.Contains(out, "cwd unknown") {
		t.Errorf("without one: %q", out)
	}
}

// hider is a Go plugin whose list event hides read_file once the session
// wrote something: one visibility truth for lists and calls.
type hider struct{}

func (hider) Name() string { return "hider" }
func (hider) List(ctx context.Context, in *policy.ListInput) ([]string, error) {
	for _, l := range in.Labels {
		if l == "ran_write_file" {
			return []string{"read_file"}, nil
		}
	}
	return nil, nil
}

func TestAToolAPluginHidesIsNeitherListedNorRun(t *testing.T) {
	t.Parallel()
	f := newFiles()
	g := sdk.New(testhost.New(t, "", host.Defaults().WithPlugin(labeler{}).WithPlugin(hider{})), sdk.WithApprover(sdk.Fixed(sdk.AllowOnce)))
	fs := g.Client("fs", f.connect(t))
	read := map[string]any{"path": "/notes.txt"}
	if _, isErr := call(t, fs, "read_file", read); isErr {
		t.Fatal("read_file refused before the session wrote")
	}
	call(t, fs, "write_file", writeArgs)
	list, err := fs.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names(list.Tools), "read_file") {
		t.Errorf("read_file still listed: %v", names(list.Tools))
	}
	if out, isErr := call(t, fs, "read_file", read); !isErr || !strings.Contains(out, "hider") {
		t.Errorf("read_file after the hide: %v %q", isErr, out)
	}
	if ran := f.ran(); len(ran) != 2 {
		t.Errorf("ran %v, want the first read and the write", ran)
	}
}

// flagger is a Go plugin that asks about every call because of its path.
type flagger struct{}

func (flagger) Name() string               { return "flagger" }
func (flagger) Matches(app, t string) bool { return true }
func (flagger) CanApprove() bool           { return false }
func (flagger) Check(ctx context.Context, in *policy.CheckInput) policy.PluginVerdict {
	return policy.PluginVerdict{Verdict: policy.Ask, Code: "path_check", Reason: "the path needs a look", Arguments: []string{"path"}}
}

func TestTheQuestionNamesTheArgumentsARuleFlagged(t *testing.T) {
	t.Parallel()
	f := newFiles()
	a := &recorder{answer: sdk.Deny}
	g := sdk.New(testhost.New(t, "", host.Defaults().WithPlugin(flagger{})), sdk.WithApprover(a))
	call(t, g.Client("fs", f.connect(t)), "read_file", map[string]any{"path": "/etc/shadow"})
	qs := a.asked()
	if len(qs) != 1 || len(qs[0].Flagged) != 1 || !strings.Contains(qs[0].Flagged[0], "path") {
		t.Fatalf("flagged: %v", qs)
	}
	if !strings.Contains(qs[0].Text, "the path needs a look") {
		t.Errorf("the question does not say why:\n%s", qs[0].Text)
	}
}

// twinClient lists write_file twice: first as read-only, then as
// destructive.
type twinClient struct{ staticClient }

func (*twinClient) ListTools(context.Context, mcp.ListToolsRequest) (*mcp.ListToolsResult, error) {
	safe := mcp.NewTool("write_file", mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false))
	return &mcp.ListToolsResult{Tools: []mcp.Tool{safe, mcp.NewTool("write_file")}}, nil
}

func TestATwiceListedToolIsDecidedAsItIsShown(t *testing.T) {
	t.Parallel()
	a := &recorder{answer: sdk.Deny}
	g := sdk.New(testhost.New(t, "", host.Defaults()), sdk.WithApprover(a))
	c := g.Client("twins", &twinClient{})
	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil || len(list.Tools) != 1 || *list.Tools[0].Annotations.ReadOnlyHint != true {
		t.Fatalf("listed %v, %v: want the first write_file only", list, err)
	}
	// Decided as the read-only tool the agent was shown, not as the
	// second definition: allowed without asking.
	if _, isErr := call(t, c, "write_file", nil); isErr || len(a.asked()) != 0 {
		t.Fatalf("isError %v, asked %d", isErr, len(a.asked()))
	}
}
