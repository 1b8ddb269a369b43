package plugin

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
)

func TestParseDescribeNeeds(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      needs
		err       string
	}{
		{"absent needs mean everything (a v1 plugin)", `{"name":"p","version":"1"}`, needAll, ""},
		{"null means absent", `{"needs":null}`, needAll, ""},
		{"an empty list means nothing but abi and event", `{"needs":[]}`, 0, ""},
		{"names select their parts", `{"needs":["labels","tool","labels"]}`, needLabels | needTool, ""},
		{"shorthands name several parts", `{"needs":["session","plugin"]}`, needSession | needPluginPart, ""},
		{"the last of a key given twice counts", `{"needs":["time"],"needs":["result"]}`, needResult, ""},
		{"an unknown name is refused with the valid ones", `{"needs":["args"]}`, 0, `needs: unknown name "args" (valid: session_id, labels, server_context, capabilities, hints, server, app, connector, tool, arguments, baseline, result, time, plugin_name, config, session, call, plugin)`},
		{"a string is not a list", `{"needs":"tool"}`, 0, `needs: want an array of strings, got "tool"`},
		{"a list of numbers is not a list of names", `{"needs":[1]}`, 0, `needs: want an array of strings, got [1]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDescribeNeeds([]byte(tc.out))
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v (%v), want %v", got, err, tc.want)
			}
		})
	}
}

// envelopePlugin is a plugin ready to build envelopes, with a fixed clock,
// declaring n (needAll: declaring nothing).
func envelopePlugin(t *testing.T, n needs) *instance {
	t.Helper()
	rt := newRuntime(t, Options{Now: func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }})
	p, err := newPlugin(rt, &config.Policy{Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	p.config = []byte(`{"k":1}`)
	for ev := range p.head {
		p.head[ev] = head(Event(ev))
	}
	p.tail = tail(p.name, p.config)
	if n != needAll {
		p.omit, p.evTail = needAll&^n, tailFor(p.name, p.config, n)
	}
	return &instance{p: p}
}

func needsCheckInput() *policy.CheckInput {
	var h hints.Set
	h.Put(hints.Destructive, hints.True)
	return &policy.CheckInput{
		Session: "s", Labels: []string{"b", "a"}, Server: "fs", App: "fs", Tool: testTool,
		Arguments: []byte(`{"path":"/x"}`), Hints: h, Caps: hints.Capabilities{CanExfiltrate: true},
		Baseline: policy.Ask, Rememberable: true, Context: &policy.ServerContext{Cwd: "/w"},
	}
}

// A plugin that declares needs gets exactly those parts, in every event it
// handles; one that declares none gets everything.
func TestEnvelopesCarryExactlyTheNeeds(t *testing.T) {
	const all = `{"abi":1,"event":"check","session":{"id":"s","labels":["a","b"]},"server_context":{"cwd":"/w"},` +
		`"call":{"capabilities":{"reads_private_data":false,"sees_untrusted_content":false,"can_exfiltrate":true},` +
		`"hints":{"destructiveHint":true},"server":"fs","app":"fs","connector":"",` +
		`"tool":{"name":"write_file","title":"Write File","definition_hash":"` + "3f1c9a0e5b7d2c4f6a8e0b1d3c5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e" + `"},"arguments":{"path":"/x"}},` +
		`"baseline":{"decision":"ask","mode":"auto","rememberable":true},"time":"2026-05-01T12:00:00Z","plugin":{"name":"p","config":{"k":1}}}`
	for _, tc := range []struct {
		name  string
		needs needs
		check string
		obs   string
		list  string
	}{
		{"no needs declared: everything, as ABI v1", needAll, all,
			`{"abi":1,"event":"observe","session":{"id":"s","labels":["a","b"]},"server_context":{"cwd":"/w"},"call":{"capabilities":{"reads_private_data":false,"sees_untrusted_content":false,"can_exfiltrate":true},"hints":{"destructiveHint":true},"server":"fs","app":"fs","connector":"","tool":{"name":"write_file","title":"Write File","definition_hash":"3f1c9a0e5b7d2c4f6a8e0b1d3c5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e"},"arguments":{"path":"/x"}},"result":{"is_error":false,"text":"ok"},"time":"2026-05-01T12:00:00Z","plugin":{"name":"p","config":{"k":1}}}`,
			`{"abi":1,"event":"list","session":{"id":"s","labels":["a","b"]},"server":"fs","app":"fs","tools":[{"name":"write_file","title":"Write File","definition_hash":"3f1c9a0e5b7d2c4f6a8e0b1d3c5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e","hints":{},"declared_hints":{}}],"time":"2026-05-01T12:00:00Z","plugin":{"name":"p","config":{"k":1}}}`},
		{"trifecta's parts: labels, capabilities and the tool", needLabels | needCapabilities | needTool,
			`{"abi":1,"event":"check","session":{"labels":["a","b"]},"call":{"capabilities":{"reads_private_data":false,"sees_untrusted_content":false,"can_exfiltrate":true},"tool":{"name":"write_file","title":"Write File","definition_hash":"3f1c9a0e5b7d2c4f6a8e0b1d3c5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e"}}}`,
			`{"abi":1,"event":"observe","session":{"labels":["a","b"]},"call":{"capabilities":{"reads_private_data":false,"sees_untrusted_content":false,"can_exfiltrate":true},"tool":{"name":"write_file","title":"Write File","definition_hash":"3f1c9a0e5b7d2c4f6a8e0b1d3c5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e"}}}`,
			`{"abi":1,"event":"list","session":{"labels":["a","b"]},"tools":[{"name":"write_file","title":"Write File","definition_hash":"3f1c9a0e5b7d2c4f6a8e0b1d3c5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e"}]}`},
		{"argguard's parts: arguments, server context, the tool name and config", needArguments | needServerContext | needTool | needConfig,
			`{"abi":1,"event":"check","server_context":{"cwd":"/w"},"call":{"tool":{"name":"write_file","title":"Write File","definition_hash":"3f1c9a0e5b7d2c4f6a8e0b1d3c5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e"},"arguments":{"path":"/x"}},"plugin":{"config":{"k":1}}}`,
			`{"abi":1,"event":"observe","server_context":{"cwd":"/w"},"call":{"tool":{"name":"write_file","title":"Write File","definition_hash":"3f1c9a0e5b7d2c4f6a8e0b1d3c5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e"},"arguments":{"path":"/x"}},"plugin":{"config":{"k":1}}}`,
			`{"abi":1,"event":"list","tools":[{"name":"write_file","title":"Write File","definition_hash":"3f1c9a0e5b7d2c4f6a8e0b1d3c5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e"}],"plugin":{"config":{"k":1}}}`},
		{"one part of each block", needSessionID | needHints | needBaseline | needResult | needTime | needPluginName,
			`{"abi":1,"event":"check","session":{"id":"s"},"call":{"hints":{"destructiveHint":true}},"baseline":{"decision":"ask","mode":"auto","rememberable":true},"time":"2026-05-01T12:00:00Z","plugin":{"name":"p"}}`,
			`{"abi":1,"event":"observe","session":{"id":"s"},"call":{"hints":{"destructiveHint":true}},"result":{"is_error":false,"text":"ok"},"time":"2026-05-01T12:00:00Z","plugin":{"name":"p"}}`,
			`{"abi":1,"event":"list","session":{"id":"s"},"tools":[{"name":"write_file","hints":{},"declared_hints":{}}],"time":"2026-05-01T12:00:00Z","plugin":{"name":"p"}}`},
		{"nothing: abi and event, and the tool names of a list", 0,
			`{"abi":1,"event":"check"}`,
			`{"abi":1,"event":"observe"}`,
			`{"abi":1,"event":"list","tools":[{"name":"write_file"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := envelopePlugin(t, tc.needs)
			c := needsCheckInput()
			o := &policy.ObserveInput{Session: c.Session, Labels: c.Labels, Server: c.Server, App: c.App, Tool: c.Tool,
				Arguments: c.Arguments, Hints: c.Hints, Caps: c.Caps, Context: c.Context, Result: "ok"}
			l := &policy.ListInput{Session: "s", Labels: c.Labels, Server: "fs", App: "fs", Tools: []*hints.Tool{testTool}, Hints: []hints.Set{{}}}
			for i := range 2 { // the second time from the instance's rendered definition
				for _, got := range []struct{ ev, got, want string }{
					{"check", string(in.appendCheck(nil, c)), tc.check},
					{"observe", string(in.appendObserve(nil, o)), tc.obs},
					{"list", string(in.appendList(nil, l)), tc.list},
				} {
					if got.got != got.want {
						t.Errorf("%s %d:\n got %s\nwant %s", got.ev, i, got.got, got.want)
					}
					if !json.Valid([]byte(got.got)) {
						t.Errorf("%s %d: not JSON", got.ev, i)
					}
				}
			}
		})
	}
}

// The rendered definition parts are reused only for the very same
// definition: a changed hash, title, hint, capability, server, app or
// connector renders afresh, and an instance remembering several
// definitions never serves one for another.
func TestRenderedDefinitionsNeverGoStale(t *testing.T) {
	in := envelopePlugin(t, needAll)
	base := needsCheckInput()
	variants := map[string]func(c *policy.CheckInput){
		"same": func(*policy.CheckInput) {},
		"hash": func(c *policy.CheckInput) {
			c.Tool = &hints.Tool{Name: testTool.Name, Title: testTool.Title, HashHex: "00"}
		},
		"title": func(c *policy.CheckInput) {
			c.Tool = &hints.Tool{Name: testTool.Name, Title: "Other", HashHex: testTool.HashHex}
		},
		"name": func(c *policy.CheckInput) {
			c.Tool = &hints.Tool{Name: "other", Title: testTool.Title, HashHex: testTool.HashHex}
		},
		"no tool":   func(c *policy.CheckInput) { c.Tool = nil },
		"hint":      func(c *policy.CheckInput) { c.Hints.Put(hints.ReadOnly, hints.True) },
		"hint off":  func(c *policy.CheckInput) { c.Hints.Put(hints.Destructive, hints.False) },
		"caps":      func(c *policy.CheckInput) { c.Caps.ReadsPrivateData = true },
		"server":    func(c *policy.CheckInput) { c.Server = "fs2" },
		"app":       func(c *policy.CheckInput) { c.App = "fs2" },
		"connector": func(c *policy.CheckInput) { c.Connector = "conn" },
	}
	names := make([]string, 0, len(variants))
	for n := range variants {
		names = append(names, n)
	}
	slices.Sort(names)
	// The reference: each variant rendered by a fresh instance.
	want := map[string]string{}
	for _, n := range names {
		c := *base
		variants[n](&c)
		want[n] = string(envelopePlugin(t, needAll).appendCheck(nil, &c))
	}
	// One instance, the variants in several interleavings (more of them
	// than it remembers), must always give the reference bytes.
	for round := range 3 {
		for i := range names {
			n := names[(i*(round+1))%len(names)]
			c := *base
			variants[n](&c)
			if got := string(in.appendCheck(nil, &c)); got != want[n] {
				t.Fatalf("round %d, %s:\n got %s\nwant %s", round, n, got, want[n])
			}
		}
	}
	if want["same"] == want["hash"] || !strings.Contains(want["hash"], `"definition_hash":"00"`) {
		t.Fatal("the variants do not differ")
	}
}

// Through a real guest: a plugin that declares needs gets exactly those
// keys, a v1 plugin everything, and a typo in needs refuses the plugin at
// load.
func TestPluginDeclaringNeedsGetsExactlyThoseKeys(t *testing.T) {
	rt := newRuntime(t, Options{})
	bin := buildGuest(t, "./testdata/goneeds")
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		config map[string]any
		keys   string // top-level keys, then each block's
		err    string
	}{
		{"a v1 plugin gets everything", nil,
			"abi event session{id labels} call{capabilities hints server app connector tool arguments} baseline{decision mode rememberable} time plugin{name config}", ""},
		{"needs select parts", map[string]any{"needs": []any{"labels", "tool", "arguments"}},
			"abi event session{labels} call{tool arguments}", ""},
		{"an empty needs gets abi and event", map[string]any{"needs": []any{}}, "abi event", ""},
		{"a typo refuses the plugin", map[string]any{"needs": []any{"tools"}}, "",
			`describe: bad output: needs: unknown name "tools" (valid: session_id, labels,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := FromBytes(ctx, rt, &config.Policy{Name: "needs", Config: tc.config}, bin)
			t.Cleanup(p.Close)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("load error %v, want %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := p.Needs(), needsNames(tc.config); !slices.Equal(got, want) {
				t.Fatalf("Needs() = %q, want %q", got, want)
			}
			// Several checks, on more than one instance.
			for i := range 3 {
				var held *instance
				if i == 1 {
					held = p.pool.take()
				}
				v := p.Check(ctx, checkInput(`{"path":"/x"}`, "l"))
				if held != nil {
					p.pool.give(held)
				}
				if v.Err != nil {
					t.Fatal(v.Err)
				}
				if got := envelopeKeys(t, v.Reason); got != tc.keys {
					t.Fatalf("check %d got keys\n %s\nwant\n %s\n(%s)", i, got, tc.keys, v.Reason)
				}
			}
		})
	}
}

// envelopeKeys lists an envelope's keys in order, and the keys of each
// object one level down in braces: "abi event session{id labels}".
func envelopeKeys(t *testing.T, env string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(env))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", env)
	}
	return objectKeys(t, dec, true)
}

// objectKeys reads the rest of an object whose '{' was read.
func objectKeys(t *testing.T, dec *json.Decoder, nest bool) string {
	var parts []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		key := k.(string)
		if d, ok := tok.(json.Delim); ok {
			if d == '{' && nest {
				parts = append(parts, key+"{"+objectKeys(t, dec, false)+"}")
				continue
			}
			for depth := 1; depth > 0; {
				tok, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				switch tok {
				case json.Delim('{'), json.Delim('['):
					depth++
				case json.Delim('}'), json.Delim(']'):
					depth--
				}
			}
		}
		parts = append(parts, key)
	}
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(parts, " ")
}

// The last labels an instance rendered are reused only for the very same
// labels: a label added, removed or changed renders afresh, sorted and
// without duplicates.
func TestRenderedLabelsFollowTheSession(t *testing.T) {
	in := envelopePlugin(t, needLabels)
	for _, tc := range []struct {
		labels []string
		want   string
	}{
		{nil, `[]`},
		{[]string{"b", "a"}, `["a","b"]`},
		{[]string{"b", "a"}, `["a","b"]`},
		{[]string{"b", "a", "c"}, `["a","b","c"]`},
		{[]string{"b", "a"}, `["a","b"]`},
		{[]string{"b", "x"}, `["b","x"]`},
		{[]string{"x", "b", "x"}, `["b","x"]`},
		{[]string{}, `[]`},
	} {
		c := needsCheckInput()
		c.Labels = tc.labels
		want := `{"abi":1,"event":"check","session":{"labels":` + tc.want + `}}`
		if got := string(in.appendCheck(nil, c)); got != want {
			t.Fatalf("labels %q:\n got %s\nwant %s", tc.labels, got, want)
		}
	}
}

// needsNames is what Plugin.Needs reports for a goneeds config: nil when
// it declares none, else the names in the ABI's order.
func needsNames(cfg map[string]any) []string {
	list, ok := cfg["needs"].([]any)
	if !ok {
		return nil
	}
	var n needs
	for _, x := range list {
		part, err := parseNeeds([]string{x.(string)})
		if err != nil {
			panic(err)
		}
		n |= part
	}
	names := []string{}
	for i, name := range needNames {
		if n&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return names
}

func TestNeedsPrintByName(t *testing.T) {
	if got := (needLabels | needTool).String(); got != "[labels tool]" {
		t.Fatalf("got %s", got)
	}
}
