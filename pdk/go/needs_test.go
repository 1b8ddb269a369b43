package pdk

import "testing"

// Describe declares the needs as given, and lists init when the config is
// read only by Configure, so that each instance gets it once.
func TestDescribeDeclaresNeeds(t *testing.T) {
	configure := func(Value) error { return nil }
	check := func(*Check) Verdict { return NoOpinion() }
	for _, tc := range []struct {
		name string
		p    Plugin
		want string
	}{
		{"a plugin without needs declares none (it gets everything)",
			Plugin{Name: "t", Version: "1", Configure: configure, Check: check},
			`{"name":"t","version":"1","events":["check"]}`},
		{"a plugin whose config only Configure reads asks for init",
			Plugin{Name: "t", Version: "1", Configure: configure, Check: check, Needs: []string{"labels", "tool"}},
			`{"name":"t","version":"1","events":["check","init"],"needs":["labels","tool"]}`},
		{"a plugin that reads its config per event does not",
			Plugin{Name: "t", Version: "1", Configure: configure, Check: check, Needs: []string{"arguments", "config"}},
			`{"name":"t","version":"1","events":["check"],"needs":["arguments","config"]}`},
		{"a plugin without Configure does not",
			Plugin{Name: "t", Version: "1", Check: check, Needs: []string{}},
			`{"name":"t","version":"1","events":["check"],"needs":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := tc.p.Handle(EventDescribe, []byte(`{"abi":1,"event":"describe","plugin":{"name":"p","config":{}}}`))
			if code != CodeOK || string(out) != tc.want {
				t.Errorf("got %d %s\nwant %s", code, out, tc.want)
			}
		})
	}
}

// An instance configured at init keeps its config through checks whose
// envelopes carry no plugin block.
func TestConfigFromInitServesChecksWithoutConfig(t *testing.T) {
	var cfg string
	configs := 0
	p := &Plugin{
		Name: "t", Version: "1", Needs: []string{"tool"},
		Configure: func(c Value) error { configs++; cfg = c.Get("k").String(); return nil },
		Check: func(c *Check) Verdict {
			return AskBecause("cfg", cfg+"|"+c.Call().ToolName())
		},
	}
	if code, _ := p.Handle(EventInit, []byte(`{"abi":1,"event":"init","data":null,"plugin":{"name":"p","config":{"k":"v"}}}`)); code != CodeOK && code != CodeNotHandled {
		t.Fatalf("init: code %d", code)
	}
	for range 2 {
		code, out := p.Handle(EventCheck, []byte(`{"abi":1,"event":"check","call":{"tool":{"name":"w"}}}`))
		if code != CodeOK || string(out) != `{"decision":"ask","code":"cfg","reason":"v|w"}` {
			t.Fatalf("check: %d %s", code, out)
		}
	}
	if configs != 1 {
		t.Errorf("Configure ran %d times, want once", configs)
	}
}
