package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

func TestLoadAllKeepsConfigOrderAndListsEveryFailure(t *testing.T) {
	rt := newRuntime(t, Options{})
	off := false
	pols := []*config.Policy{
		{Name: "tri", Builtin: "trifecta", Pos: config.Position{File: "c.toml", Line: 3, Col: 1}},
		{Name: "gone", Wasm: "missing.wasm", Pos: config.Position{File: "/etc/tw/c.toml", Line: 7, Col: 1}},
		{Name: "nope", Builtin: "nosuch", Pos: config.Position{File: "c.toml", Line: 9, Col: 1}},
		{Name: "off", Builtin: "trifecta", Enabled: &off},
		{Name: "args", Builtin: "argguard", OnError: "maybe", Pos: config.Position{File: "c.toml", Line: 12, Col: 1}},
	}
	ps, err := LoadAll(context.Background(), rt, pols, nil)
	var names []string
	for _, p := range ps {
		names = append(names, p.Name())
	}
	if got := strings.Join(names, ","); got != "tri,gone,nope,args" {
		t.Errorf("plugins %s", got)
	}
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		`/etc/tw/c.toml:7:1: policies.gone: plugin "gone": open /etc/tw/missing.wasm: no such file or directory`,
		`c.toml:9:1: policies.nope: plugin "nope": no built-in plugin "nosuch" (built in: argguard, secrets, trifecta)`,
		`c.toml:12:1: policies.args: plugin "args": on_error = "maybe": want "deny", "ask" or "abstain"`,
	}
	if len(lines) != len(want) {
		t.Fatalf("error:\n%s", err)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], want[i])
		}
	}
	if ps[0].Err() != nil || ps[1].Err() == nil {
		t.Errorf("Err: %v %v", ps[0].Err(), ps[1].Err())
	}
	if v := ps[1].Check(context.Background(), checkInput(`{}`)); v.Verdict != policy.Deny || !strings.Contains(v.Reason, "missing.wasm") {
		t.Errorf("a policy that failed to load must deny by default: %+v", v)
	}
}

func TestPolicyMatchesAppsAndToolsGlobs(t *testing.T) {
	rt := newRuntime(t, Options{})
	p, _ := newPlugin(rt, &config.Policy{Name: "x", Apps: []string{"github", "fs*"}, Tools: []string{"write_*", "?elete"}})
	cases := []struct {
		app, tool string
		want      bool
	}{
		{"github", "write_file", true},
		{"fs-local", "delete", true},
		{"fs", "write_", true},
		{"gitlab", "write_file", false},
		{"github", "read_file", false},
		{"github", "deletes", false},
	}
	for _, c := range cases {
		if got := p.Matches(c.app, c.tool); got != c.want {
			t.Errorf("Matches(%q, %q) = %v", c.app, c.tool, got)
		}
	}
	all, _ := newPlugin(rt, &config.Policy{Name: "all"})
	if !all.Matches("anything", "at all") {
		t.Error("no globs must match everything")
	}
}

// The trifecta scenario through the plugin: observe a private read and an
// open-world read, then an exfiltration-capable call is asked about (not
// rememberably), or denied in mode "deny".
func TestTrifectaPluginScenario(t *testing.T) {
	rt := newRuntime(t, Options{})
	ctx := context.Background()
	for _, mode := range []string{"ask", "deny"} {
		p, err := Load(ctx, rt, &config.Policy{Name: "trifecta", Builtin: "trifecta", Config: map[string]any{"mode": mode}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var labels []string
		observe := func(caps hints.Capabilities) {
			o := p.Observe(ctx, &policy.ObserveInput{Session: "s", Labels: labels, Tool: testTool, Caps: caps, Result: "data"})
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			labels = append(labels, o.Labels...)
		}
		send := &policy.CheckInput{Session: "s", Tool: &hints.Tool{Name: "send_mail"}, Caps: hints.Capabilities{CanExfiltrate: true}, Arguments: []byte(`{"to":"x@example.com"}`)}
		send.Labels = labels
		if v := p.Check(ctx, send); v.Verdict != policy.Abstain {
			t.Errorf("clean session: %+v", v)
		}
		observe(hints.Capabilities{ReadsPrivateData: true})
		send.Labels = labels
		if v := p.Check(ctx, send); v.Verdict != policy.Abstain {
			t.Errorf("private data only: %+v", v)
		}
		observe(hints.Capabilities{SeesUntrustedContent: true, CanExfiltrate: true})
		if strings.Join(labels, ",") != "private_data_seen,untrusted_content_seen" {
			t.Fatalf("labels %v", labels)
		}
		send.Labels = labels
		v := p.Check(ctx, send)
		want, _ := policy.ParseVerdict(mode)
		if v.Verdict != want || v.Remember || v.Code != codeTrifecta || !strings.Contains(v.Reason, `"send_mail"`) {
			t.Errorf("mode %s: %+v", mode, v)
		}
		read := *send
		read.Caps = hints.Capabilities{ReadsPrivateData: true}
		if v := p.Check(ctx, &read); v.Verdict != policy.Abstain {
			t.Errorf("a call that cannot exfiltrate: %+v", v)
		}
	}
	if _, err := Load(ctx, rt, &config.Policy{Name: "t", Builtin: "trifecta", Config: map[string]any{"mode": "block"}}, nil); err == nil ||
		!strings.Contains(err.Error(), `error code 4 (bad config): mode: want "ask" or "deny", got "block"`) {
		t.Errorf("bad mode: %v", err)
	}
}

func TestArgguardPlugin(t *testing.T) {
	rt := newRuntime(t, Options{})
	ctx := context.Background()
	// As the TOML decoder hands it over.
	cfg := map[string]any{"rules": []any{
		map[string]any{"tool": "write_file", "arg": "path", "deny_glob": "/etc/**"},
		map[string]any{"tool": "*", "arg": "command", "ask_regex": `rm\s+-rf`},
		map[string]any{"tool": "http_*", "arg": "/options/url", "deny_regex": `^http://`, "code": "plain_http"},
		map[string]any{"tool": "*", "arg": "paths", "ask_glob": "**/.ssh/**"},
	}}
	p, err := Load(ctx, rt, &config.Policy{Name: "argguard", Builtin: "argguard", Config: cfg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool, args string
		want       policy.Verdict
		code       string
	}{
		{"write_file", `{"path":"/etc/passwd"}`, policy.Deny, "arg_denied"},
		{"write_file", `{"path":"/etc"}`, policy.Deny, "arg_denied"},
		{"write_file", `{"path":"/tmp/../etc/shadow"}`, policy.Deny, "arg_denied"},
		{"write_file", `{"path":"//etc//hosts"}`, policy.Deny, "arg_denied"},
		{"write_file", `{"path":"/home/me/etc/x"}`, policy.Abstain, ""},
		{"read_file", `{"path":"/etc/passwd"}`, policy.Abstain, ""},
		{"shell", `{"command":"cd / && rm  -rf *"}`, policy.Ask, "arg_needs_approval"},
		{"shell", `{"command":"ls -la"}`, policy.Abstain, ""},
		{"http_get", `{"options":{"url":"http://example.com"}}`, policy.Deny, "plain_http"},
		{"http_get", `{"options":{"url":"https://example.com"}}`, policy.Abstain, ""},
		{"copy", `{"paths":["/tmp/a","/home/me/.ssh/id_rsa"]}`, policy.Ask, "arg_needs_approval"},
		{"write_file", `{"path":"/etc/x","command":"rm -rf /"}`, policy.Deny, "arg_denied"},
		{"write_file", `{"path":42}`, policy.Abstain, ""},
		{"write_file", `[]`, policy.Abstain, ""},
	}
	for _, c := range cases {
		in := checkInput(c.args)
		in.Tool = &hints.Tool{Name: c.tool}
		v := p.Check(ctx, in)
		if v.Err != nil || v.Verdict != c.want || (c.code != "" && v.Code != c.code) || v.Remember {
			t.Errorf("%s %s: %+v", c.tool, c.args, v)
		}
	}
	bad := []struct {
		cfg  map[string]any
		want string
	}{
		{map[string]any{"rule": []any{}}, `rule: unknown key (argguard knows only "rules")`},
		{map[string]any{"rules": []any{map[string]any{"tool": "x", "deny_glob": "/a"}}}, `rules[0]: missing "arg"`},
		{map[string]any{"rules": []any{map[string]any{"arg": "a", "ask_regex": "(("}}}, "rules[0].ask_regex: error parsing regexp: missing closing )"},
		{map[string]any{"rules": []any{map[string]any{"arg": "a", "deny_glob": "/a", "ask_glob": "/b"}}}, "has both"},
		{map[string]any{"rules": []any{map[string]any{"arg": "a", "deny_globs": "/a"}}}, "rules[0].deny_globs: unknown key"},
	}
	for _, b := range bad {
		_, err := Load(ctx, rt, &config.Policy{Name: "ag", Builtin: "argguard", Config: b.cfg}, nil)
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.HasPrefix(err.Error(), `plugin "ag": describe: error code 4 (bad config): `) {
			t.Errorf("config %v: %v, want %q", b.cfg, err, b.want)
		}
	}
}

// Many goroutines share one plugin through its pool (run with -race).
func TestConcurrentEventsShareThePool(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 3})
	p, err := Load(context.Background(), rt, &config.Policy{Name: "tri", Builtin: "trifecta"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				in := checkInput(`{"n":1}`)
				want := policy.Abstain
				if (g+i)%2 == 0 {
					in.Labels = []string{labelUntrusted, labelPrivate}
					want = policy.Ask
				}
				if v := p.Check(context.Background(), in); v.Verdict != want || v.Err != nil {
					t.Errorf("g%d i%d: %+v", g, i, v)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if n := len(p.pool.places); n > 3 || n < 1 {
		t.Errorf("%d instances, pool size 3", n)
	}
}

func TestCallerContextBoundsTheEvent(t *testing.T) {
	rt := newRuntime(t, Options{})
	p, err := loadWasm(t, rt, config.Policy{Name: "loop", TimeoutMs: 5000}, filepath.Join("testdata", "hostile", "loop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	v := p.Check(ctx, checkInput(`"BOOM"`))
	var f *Fault
	if !errors.As(v.Err, &f) || f.Kind != FaultCanceled || time.Since(start) > 2*time.Second {
		t.Errorf("%+v after %v", v, time.Since(start))
	}
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if v := p.Check(done, checkInput(`{}`)); !errors.As(v.Err, &f) || f.Kind != FaultCanceled || !strings.Contains(v.Reason, "canceled") {
		t.Errorf("canceled context: %+v", v)
	}
	if v := p.Check(context.Background(), checkInput(`{}`)); v.Verdict != policy.Allow {
		t.Errorf("after: %+v", v)
	}
}

func TestClosedRuntimeFailsEvents(t *testing.T) {
	rt := newRuntime(t, Options{})
	p, err := loadWasm(t, rt, config.Policy{Name: "noop"}, filepath.Join("testdata", "wat", "noop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	rt.Close(context.Background())
	v := p.Check(context.Background(), checkInput(`{}`))
	var f *Fault
	if v.Verdict != policy.Deny || !errors.As(v.Err, &f) || f.Kind != FaultClosed {
		t.Errorf("%+v", v)
	}
	if _, err := loadWasm(t, rt, config.Policy{Name: "late"}, filepath.Join("testdata", "wat", "noop.wasm")); err == nil {
		t.Error("load after close")
	}
}

// WASI stdout and stderr and the log import reach the host's log, capped.
func TestPluginOutputGoesToTheCappedLog(t *testing.T) {
	var buf testkit.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rt := newRuntime(t, Options{Logger: log})
	p, err := loadWasm(t, rt, config.Policy{Name: "chatty"}, filepath.Join("testdata", "wat", "chatty.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if v := p.Check(context.Background(), checkInput(`{}`)); v.Verdict != policy.Abstain || v.Err != nil {
		t.Fatalf("%+v", v)
	}
	out := buf.String()
	for _, want := range []string{
		`level=INFO msg="hello from stdout" plugin=chatty`,
		`level=WARN msg="trouble on stderr" plugin=chatty`,
		`level=WARN msg="plugin log messages dropped" plugin=chatty dropped=10`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, `msg="log line"`); n != 30 {
		t.Errorf("%d log lines kept, want 30 (32 per event, 2 used by stdout and stderr)", n)
	}
}

// The envelope is valid JSON with the documented keys, in the documented
// order, whatever strings it carries.
func TestCheckEnvelope(t *testing.T) {
	rt := newRuntime(t, Options{Now: func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }})
	p, err := newPlugin(rt, &config.Policy{Name: `we"ird`})
	if err != nil {
		t.Fatal(err)
	}
	p.config = []byte(`{"k":[1]}`)
	for ev := range p.head {
		p.head[ev] = head(Event(ev))
	}
	p.tail = tail(p.name, p.config)
	in := &instance{p: p}
	var h hints.Set
	h.Put(hints.ReadOnly, hints.False)
	h.Put(hints.Destructive, hints.True)
	c := &policy.CheckInput{
		Session: "s\n1", Labels: []string{"b", "a", "b"}, Server: "fs", App: "fs",
		Tool: &hints.Tool{Name: "write\x00file", Title: "W\xffF", HashHex: "ab"}, Arguments: []byte(` {"p": 1} `),
		Hints: h, Caps: hints.Capabilities{CanExfiltrate: true}, Baseline: policy.Ask, Rememberable: true,
	}
	got := string(in.appendCheck(nil, c))
	want := `{"abi":1,"event":"check","session":{"id":"s\n1","labels":["a","b"]},` +
		`"call":{"capabilities":{"reads_private_data":false,"sees_untrusted_content":false,"can_exfiltrate":true},` +
		`"hints":{"readOnlyHint":false,"destructiveHint":true},"server":"fs","app":"fs","connector":"",` +
		`"tool":{"name":"write\u0000file","title":"W\ufffdF","definition_hash":"ab"},"arguments": {"p": 1} },` +
		`"baseline":{"decision":"ask","mode":"auto","rememberable":true},"time":"2026-05-01T12:00:00Z",` +
		`"plugin":{"name":"we\"ird","config":{"k":[1]}}}`
	if got != want {
		t.Errorf("envelope:\n got %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Error("not valid JSON")
	}
	c.Arguments = []byte(`{"broken":`)
	if got := string(in.appendCheck(nil, c)); !strings.Contains(got, `"arguments":null`) || !json.Valid([]byte(got)) {
		t.Errorf("invalid arguments must become null: %s", got)
	}
	if strings.Join(c.Labels, ",") != "b,a,b" {
		t.Errorf("the caller's labels were modified: %v", c.Labels)
	}
	o := string(in.appendObserve(nil, &policy.ObserveInput{Tool: testTool, Result: strings.Repeat("é", maxResultText)}))
	if !json.Valid([]byte(o)) || len(o) > maxResultText+1000 {
		t.Errorf("observe envelope: %d bytes, valid %v", len(o), json.Valid([]byte(o)))
	}
	l := string(in.appendList(nil, &policy.ListInput{Server: "fs", Tools: []*hints.Tool{testTool, {Name: "b"}}}))
	if !json.Valid([]byte(l)) || !strings.Contains(l, `"tools":[{"name":"write_file","title":"Write File","definition_hash":"3f1c`) {
		t.Errorf("list envelope: %s", l)
	}
}

// List: the plugin sees every tool of an app its apps globs match, and may
// hide only tools its tools globs match.
func TestListHidesOnlyMatchingTools(t *testing.T) {
	rt := newRuntime(t, Options{})
	pol := config.Policy{Name: "ex", Apps: []string{"fs"}, Tools: []string{"delete_*"}, Config: map[string]any{"blocked_tool": "delete_all"}}
	p, err := loadWasm(t, rt, pol, "../../pdk/testdata/conformance/example.wasm")
	if err != nil {
		t.Fatal(err)
	}
	tools := []*hints.Tool{{Name: "read"}, {Name: "delete_all"}}
	hide, err := p.List(context.Background(), &policy.ListInput{Server: "fs", App: "fs", Tools: tools})
	if err != nil || strings.Join(hide, ",") != "delete_all" {
		t.Errorf("hide %v %v", hide, err)
	}
	if hide, _ := p.List(context.Background(), &policy.ListInput{Server: "gh", App: "gh", Tools: tools}); hide != nil {
		t.Errorf("other app: %v", hide)
	}
	pol.Tools = []string{"read"}
	p2, _ := loadWasm(t, rt, pol, "../../pdk/testdata/conformance/example.wasm")
	if hide, _ := p2.List(context.Background(), &policy.ListInput{App: "fs", Tools: tools}); len(hide) != 0 {
		t.Errorf("a hide outside the tools globs: %v", hide)
	}
}

func TestParseCheckOutput(t *testing.T) {
	cases := []struct {
		out  string
		want policy.PluginVerdict
		err  string
	}{
		{`{"decision":"deny","code":"x_y","reason":"r","remember":true,"labels":["a","b:c"]}`,
			policy.PluginVerdict{Verdict: policy.Deny, Code: "x_y", Reason: "r", Remember: true, Labels: []string{"a", "b:c"}}, ""},
		{` {"decision" : "abstain", "future": {"x": [1, "y"]}} `, policy.PluginVerdict{Verdict: policy.Abstain, Code: "plugin"}, ""},
		{`{"decision":"allow","code":null,"reason":null}`, policy.PluginVerdict{Verdict: policy.Allow, Code: "plugin"}, ""},
		{`{"decision":"a\u006c\u006cow"}`, policy.PluginVerdict{Verdict: policy.Allow, Code: "plugin"}, ""},
		{`{}`, policy.PluginVerdict{}, `missing "decision"`},
		{`{"decision":"maybe"}`, policy.PluginVerdict{}, `decision "maybe" is not allow`},
		{`{"decision":"ask","code":"Bad Code"}`, policy.PluginVerdict{}, `code "Bad Code" must match`},
		{`{"decision":"ask","labels":["ok","not ok"]}`, policy.PluginVerdict{}, `label "not ok" must match`},
		{`{"decision":"ask","remember":"yes"}`, policy.PluginVerdict{}, "expected true or false"},
		{`{"decision":"ask"} trailing`, policy.PluginVerdict{}, "unexpected data after the JSON value"},
		{`{"decision":"ask"`, policy.PluginVerdict{}, "expected ',' or '}'"},
		{`[1]`, policy.PluginVerdict{}, "not a JSON object"},
		{`{"decision":"ask","labels":[` + strings.Repeat(`"l",`, 32) + `"l"]}`, policy.PluginVerdict{}, "more than 32 entries"},
	}
	for _, c := range cases {
		v, err := parseCheck([]byte(c.out))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.out, err, c.err)
			}
			continue
		}
		if err != nil || v.Verdict != c.want.Verdict || v.Code != c.want.Code || v.Reason != c.want.Reason || v.Remember != c.want.Remember || strings.Join(v.Labels, ",") != strings.Join(c.want.Labels, ",") {
			t.Errorf("%s: %+v %v", c.out, v, err)
		}
	}
	v, _ := parseCheck([]byte(`{"decision":"ask","reason":"` + strings.Repeat("x", 2000) + `\u0007"}`))
	if len(v.Reason) != maxReason || strings.ContainsRune(v.Reason, 7) {
		t.Errorf("reason not cleaned: %d bytes", len(v.Reason))
	}
}

func FuzzValidJSONAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2]`, `"a\u00e9"`, `{"a":[true,false,null,-1.5e3]}`, `{"a"}`, `01`, `"\x01"`, `[1,]`, ` 1 `, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Errorf("validJSON(%q) = %v, encoding/json says %v", b, got, want)
		}
	})
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"a*c", "abbbc", true}, {"a*c", "abd", false}, {"?b", "ab", true},
		{"*a*a*a*b", strings.Repeat("a", 50), false}, {"x", "x", true}, {"x", "xx", false},
		{"[a-c]x", "bx", true}, {"[a-c]x", "dx", false}, {`\*`, "*", true}, {`\*`, "a", false},
	} {
		if got := compileGlob(c.p).match(c.s); got != c.want {
			t.Errorf("%q ~ %q = %v", c.p, c.s, got)
		}
	}
}

// A warm instance makes no host allocations per event: buffers, function
// handles, stacks, the call context and the deadline timer are per
// instance, and parsed verdicts are memoised.
func TestSteadyStateAllocations(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 1})
	for _, c := range []struct {
		name string
		load func() (*Plugin, error)
	}{
		{"wat", func() (*Plugin, error) {
			return loadWasm(t, rt, config.Policy{Name: "ex", Config: map[string]any{"blocked_tool": "x"}}, "../../pdk/testdata/conformance/example.wasm")
		}},
		{"trifecta (Rust)", func() (*Plugin, error) {
			return Load(context.Background(), rt, &config.Policy{Name: "tri", Builtin: "trifecta"}, nil)
		}},
		{"argguard (Rust)", func() (*Plugin, error) {
			return Load(context.Background(), rt, &config.Policy{Name: "arg", Builtin: "argguard", Config: bodyRule}, nil)
		}},
		{"a Go guest (testdata/goregexguard)", func() (*Plugin, error) {
			return FromBytes(context.Background(), rt, &config.Policy{Name: "arg", Config: bodyRule}, goRegexGuard(t))
		}},
	} {
		p, err := c.load()
		if err != nil {
			t.Fatal(err)
		}
		in := checkInput(`{"path":"/tmp/x"}`, "tainted", labelPrivate, labelUntrusted)
		ctx := context.Background()
		for i := 0; i < 200; i++ {
			p.Check(ctx, in)
		}
		allocs := testing.AllocsPerRun(200, func() { p.Check(ctx, in) })
		if allocs > guestCallAllocs {
			t.Errorf("%s: %.1f allocations per event, want at most %d (%s build)", c.name, allocs, guestCallAllocs, interruptStrategy)
		}
	}
}

// A Go guest's memory stays flat over many events with big inputs: the
// PDK's runtime.Gosched() at the end of each event during a GC cycle lets
// the GC finish its cycles (without it, linear memory grows without bound;
// docs/plugins.md).
func TestGoGuestMemoryStaysFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("20000 events")
	}
	rt := newRuntime(t, Options{PoolSize: 1})
	// What is measured is memory, not time: a generous deadline keeps a
	// loaded machine's stalls from failing it.
	p, err := FromBytes(context.Background(), rt, &config.Policy{Name: "arg", Config: bodyRule, MemoryLimitMB: 24, TimeoutMs: 5000}, goRegexGuard(t))
	if err != nil {
		t.Fatal(err)
	}
	in := trifectaInput(strings.Repeat("x", 16<<10))
	ctx := context.Background()
	for i := 0; i < 20000; i++ {
		if v := p.Check(ctx, in); v.Err != nil || v.Verdict != policy.Ask {
			t.Fatalf("event %d: %+v", i, v)
		}
	}
	inst := p.pool.take()
	defer func() { p.pool.give(inst) }()
	if inst.calls < 20000 {
		t.Errorf("the instance was replaced (%d events on the current one): memory grew past 75%% of the cap", inst.calls)
	}
	t.Logf("linear memory after 20000 events of 16 KiB: %d KiB", inst.mem.Size()>>10)
	if size := inst.mem.Size(); size > 16<<20 {
		t.Errorf("linear memory %d MiB after 20000 events", size>>20)
	}
}

func trifectaInput(body string) *policy.CheckInput {
	args, _ := json.Marshal(map[string]string{"body": body})
	in := checkInput(string(args), labelPrivate, labelUntrusted)
	in.Tool = &hints.Tool{Name: "send_mail"}
	return in
}

// bodyRule is an argguard config that asks when the "body" argument holds
// "xxx": a Go guest that reads a big argument and runs a regexp on it.
var bodyRule = map[string]any{"rules": []any{map[string]any{"tool": "*", "arg": "body", "ask_regex": "x{3}"}}}

// Closing the runtime while an event runs interrupts the event (it fails
// as closed, not at its deadline) and frees its memory only after the
// guest has stopped: linear memory is an mmap reservation, and unmapping
// it under running guest code would crash the host.
func TestCloseDuringAnEventInterruptsIt(t *testing.T) {
	for round := 0; round < 6; round++ {
		rt := newRuntime(t, Options{})
		// loop spins on locals; bulkloop fills linear memory in a loop.
		guest := [...]string{"loop.wasm", "bulkloop.wasm"}[round%2]
		p, err := loadWasm(t, rt, config.Policy{Name: "spin", TimeoutMs: 60_000}, filepath.Join("testdata", "hostile", guest))
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan policy.PluginVerdict)
		go func() { got <- p.Check(context.Background(), checkInput(`{"path":"BOOM"}`)) }()
		time.Sleep(time.Duration(20+round*10) * time.Millisecond) // the guest is spinning by now
		if err := rt.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		v := <-got
		var f *Fault
		if v.Verdict != policy.Deny || !errors.As(v.Err, &f) || f.Kind != FaultClosed {
			t.Fatalf("round %d (%s): %+v", round, guest, v)
		}
	}
}

// Every instance reads its config under the init deadline: a new instance
// (here the second, while the first is busy) is described before it
// serves an event, so a configure slower than the event deadline does not
// fail the event that happens to need a fresh instance.
func TestNewInstancesConfigureUnderTheInitDeadline(t *testing.T) {
	if interruptStrategy == "wazero" {
		t.Skip("wazero's interruption exits to Go at every loop iteration: this guest's 300 M-iteration configure outlasts any init deadline (the ordering tested is the same in both builds)")
	}
	rt := newRuntime(t, Options{PoolSize: 2})
	p, err := loadWasm(t, rt, config.Policy{Name: "slow", TimeoutMs: 20}, filepath.Join("testdata", "wat", "slowconfig.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	first := p.pool.take() // busy elsewhere: the next event needs a new instance
	defer func() { p.pool.give(first) }()
	v := p.Check(context.Background(), checkInput(`{}`))
	if v.Err != nil || v.Verdict != policy.Allow || v.Code != "configured" {
		t.Fatalf("first event of a new instance: %+v", v)
	}
}
