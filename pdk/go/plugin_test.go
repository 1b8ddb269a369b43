package pdk

import (
	"errors"
	"strings"
	"testing"
)

const checkEnv = `{"abi":1,"event":"check","session":{"id":"s","labels":["a","tainted"]},` +
	`"call":{"capabilities":{"reads_private_data":false,"sees_untrusted_content":true,"can_exfiltrate":true},` +
	`"hints":{"readOnlyHint":true},"server":"fs","app":"fsapp","connector":"c",` +
	`"tool":{"name":"write_file","title":"Write","definition_hash":"ab"},"arguments":{"path":"/etc/x"}},` +
	`"baseline":{"decision":"ask","mode":"writes","rememberable":false},"time":"2026-01-01T00:00:00Z",` +
	`"plugin":{"name":"mine","config":{"k":"v"}}}`

func TestHandleCheckReadsEveryField(t *testing.T) {
	var cfg string
	p := &Plugin{
		Name: "t", Version: "1",
		Configure: func(c Value) error { cfg = c.Get("k").String(); return nil },
		Check: func(c *Check) Verdict {
			call := c.Call()
			tool := call.Tool()
			caps := call.Capabilities()
			b := c.Baseline()
			ro, set := call.Hints().Get("readOnlyHint")
			got := strings.Join([]string{c.Session().ID(), call.Server(), call.App(), call.Connector(), tool.Name, tool.Title,
				tool.DefinitionHash, call.Arguments().Get("path").String(), b.Decision, b.Mode, c.Time(), c.Policy()}, "|")
			if got != "s|fs|fsapp|c|write_file|Write|ab|/etc/x|ask|writes|2026-01-01T00:00:00Z|mine" ||
				!caps.CanExfiltrate || !caps.SeesUntrustedContent || caps.ReadsPrivateData || !ro || !set || b.Rememberable ||
				!c.Session().HasLabel("tainted") || c.Session().HasLabel("taint") {
				return DenyBecause("wrong", got)
			}
			return Verdict{Decision: Ask, Code: "ok", Reason: "line\n\"quoted\"", Labels: []string{"x"}}
		},
	}
	code, out := p.Handle(EventCheck, []byte(checkEnv))
	if code != CodeOK || string(out) != `{"decision":"ask","code":"ok","reason":"line\n\"quoted\"","labels":["x"]}` {
		t.Errorf("%d %s", code, out)
	}
	if cfg != "v" {
		t.Errorf("config %q", cfg)
	}
}

func TestHandleTurnsFailuresIntoCodes(t *testing.T) {
	p := &Plugin{Name: "t", Version: "1", Check: func(c *Check) Verdict {
		switch c.Call().ToolName() {
		case "panic":
			panic("boom")
		case "err":
			panic(errors.New("bad thing"))
		case "fail":
			Fail(7, "custom failure")
		case "index":
			var a []int
			_ = a[3]
		}
		return NoOpinion()
	}}
	for tool, want := range map[string]string{
		"panic": "3 panic: boom", "err": "3 panic: bad thing", "fail": "7 custom failure",
		"index": "3 panic: runtime error: index out of range [3] with length 0", "ok": `0 {"decision":"abstain"}`,
	} {
		env := `{"call":{"tool":{"name":"` + tool + `"}}}`
		code, out := p.Handle(EventCheck, []byte(env))
		if got := strings.Join([]string{string(rune('0' + code)), string(out)}, " "); got != want {
			t.Errorf("%s: %q, want %q", tool, got, want)
		}
	}
	if code, _ := p.Handle(EventObserve, []byte(`{}`)); code != CodeNotHandled {
		t.Errorf("observe without a handler: %d", code)
	}
	if code, _ := p.Handle(9, []byte(`{}`)); code != CodeNotHandled {
		t.Errorf("unknown event: %d", code)
	}
	if code, _ := p.Handle(EventCheck, []byte(`not json`)); code != CodeBadInput {
		t.Errorf("bad input: %d", code)
	}
}

func TestDescribeAndConfigErrors(t *testing.T) {
	p := &Plugin{Name: "n", Version: "2.0", Check: func(*Check) Verdict { return NoOpinion() },
		Observe:   func(*Observe) []string { return nil },
		Configure: func(c Value) error { return ConfigError("rules", "want an array") }}
	code, out := p.Handle(EventDescribe, []byte(`{"plugin":{"config":{"rules":1}}}`))
	if code != CodeBadConfig || string(out) != "rules: want an array" {
		t.Errorf("%d %s", code, out)
	}
	p = &Plugin{Name: "n", Version: "2.0", Check: func(*Check) Verdict { return NoOpinion() }, Observe: func(*Observe) []string { return nil }}
	code, out = p.Handle(EventDescribe, []byte(`{"plugin":{"name":"x","config":{}}}`))
	if code != CodeOK || string(out) != `{"name":"n","version":"2.0","events":["check","observe"]}` {
		t.Errorf("%d %s", code, out)
	}
}

func TestListAndObserve(t *testing.T) {
	p := &Plugin{Name: "n", Version: "1",
		Observe: func(o *Observe) []string {
			if r := o.Result(); r.IsError && r.Text == "t" {
				return []string{"seen"}
			}
			return nil
		},
		List: func(l *List) []string {
			var hide []string
			l.Tools(func(t ListTool) bool {
				if v, _ := t.DeclaredHints.Get("destructiveHint"); v {
					hide = append(hide, t.Name)
				}
				return true
			})
			return hide
		}}
	code, out := p.Handle(EventObserve, []byte(`{"result":{"text":"t","is_error":true}}`))
	if code != CodeOK || string(out) != `{"labels":["seen"]}` {
		t.Errorf("%d %s", code, out)
	}
	code, out = p.Handle(EventList, []byte(`{"tools":[{"name":"a","declared_hints":{"destructiveHint":true}},{"name":"b","declared_hints":{}}]}`))
	if code != CodeOK || string(out) != `{"hide":["a"]}` {
		t.Errorf("%d %s", code, out)
	}
}

// The native twin of a Go guest's hot path: the lookups a check makes.
func BenchmarkCheckLookups(b *testing.B) {
	p := &Plugin{Name: "t", Version: "1", Check: func(c *Check) Verdict {
		if c.Call().Capabilities().CanExfiltrate && c.Session().HasLabel("tainted") {
			return AskBecause("x", "y")
		}
		return NoOpinion()
	}}
	in := []byte(checkEnv)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p.Handle(EventCheck, in)
	}
}

// The envelope remembers the top-level and call members it has seen; past
// its capacity (12) and with escaped keys, lookups still find everything.
func TestEnvelopeCacheFindsEveryKey(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{`)
	for i := 0; i < 20; i++ {
		b.WriteString(`"decoy` + string(rune('a'+i)) + `":{"call":{"tool":{"name":"no"}}},`)
	}
	b.WriteString(` "c\u0061ll" : {"x":1,"y":[1,2,{"z":"}"}],"tool":{"name":"t\"1"},"capabilities":{"can_exfiltrate":true}},`)
	b.WriteString(`"session":{"labels":["a","b\u0063",3,{"l":"x"},"x"]},"time":"now"}`)
	in := []byte(b.String())
	p := &Plugin{Name: "t", Version: "1", Check: func(c *Check) Verdict {
		for round := 0; round < 2; round++ {
			call := c.Call()
			if call.ToolName() != `t"1` || !call.Capabilities().CanExfiltrate || c.Time() != "now" ||
				!c.Session().HasLabel("bc") || !c.Session().HasLabel("x") || c.Session().HasLabel("l") ||
				c.Raw().Get("decoyt").Get("call").Get("tool").Get("name").String() != "no" || c.Raw().Get("decoyu").Exists() {
				return DenyBecause("wrong", call.ToolName())
			}
		}
		return AllowBecause("ok", "")
	}}
	for i := 0; i < 3; i++ { // the cache is reset between events
		if code, out := p.Handle(EventCheck, in); code != CodeOK || string(out) != `{"decision":"allow","code":"ok"}` {
			t.Fatalf("%d %s", code, out)
		}
	}
	if code, out := p.Handle(EventCheck, []byte(`{"call":{"tool":{"name":"other"}}}`)); code != CodeOK || !strings.Contains(string(out), `"other"`) {
		t.Errorf("a second envelope: %d %s", code, out)
	}
}

// Zero values of the event types answer as missing, not panic.
func TestZeroEventTypes(t *testing.T) {
	var c Check
	var s Session
	var call Call
	if c.Time() != "" || c.Raw().Exists() || c.Call().ToolName() != "" || c.Session().HasLabel("x") ||
		s.ID() != "" || s.Labels().Exists() || call.Capabilities().CanExfiltrate || call.Arguments().Exists() {
		t.Error("zero values")
	}
}

func TestHasStringAndStrEquals(t *testing.T) {
	v := mustParse(t, `["plain", "esc\u0061ped", 7, null, {"a":"b"}, ["x"], "a\"b", "", "long string of more than eight bytes"]`)
	for _, s := range []string{"plain", "escaped", `a"b`, "", "long string of more than eight bytes"} {
		if !v.HasString(s) {
			t.Errorf("HasString(%q) = false", s)
		}
	}
	for _, s := range []string{"7", "b", "x", "escaped ", "plai", "long string of more than eight byte"} {
		if v.HasString(s) {
			t.Errorf("HasString(%q) = true", s)
		}
	}
	if !v.Index(1).StrEquals("escaped") || v.Index(1).StrEquals(`esc\u0061ped`) || !v.Index(7).StrEquals("") || v.Index(2).StrEquals("7") {
		t.Error("StrEquals")
	}
	if mustParse(t, `{"a":1}`).HasString("a") {
		t.Error("HasString on an object")
	}
}

// A verdict names the arguments it is about under "arguments" (ABI 5.2).
func TestVerdictNamesItsArguments(t *testing.T) {
	p := &Plugin{Name: "t", Version: "1", Check: func(c *Check) Verdict {
		return AskBecause("arg", "look at these").About("path", "/options/url")
	}}
	code, out := p.Handle(EventCheck, []byte(checkEnv))
	if code != CodeOK || string(out) != `{"decision":"ask","code":"arg","reason":"look at these","arguments":["path","/options/url"]}` {
		t.Errorf("%d %s", code, out)
	}
	base := DenyBecause("x", "y").About("a")
	if a, b := base.About("b"), base.About("c"); a.Arguments[1] != "b" || b.Arguments[1] != "c" || len(base.Arguments) != 1 {
		t.Errorf("About shares its array: %v %v %v", a.Arguments, b.Arguments, base.Arguments)
	}
}
