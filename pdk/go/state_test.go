package pdk

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStateReadsTheEnvelopeAndSendsChangesWithTheOutput(t *testing.T) {
	p := &Plugin{
		Name: "budget", Version: "1", State: true,
		Check: func(c *Check) Verdict {
			last, _ := c.State().Entry("last")
			c.State().Set("last", "now "+last)
			c.State().Delete("old")
			return AllowBecause("n", strings.Repeat("x", int(c.State().Counter("calls")))).Add("calls", 1).Add("calls", 1)
		},
		Observe: func(o *Observe) []string { return nil },
	}
	in := `{"abi":1,"event":"check","session":{"id":"s","labels":[]},"state":{"counters":{"calls":3},"entries":{"last":"then"}},"plugin":{"name":"budget","config":{}}}`
	for _, tc := range []struct {
		name, in string
		event    uint32
		want     string
	}{
		{"describe asks for state", `{"abi":1,"event":"describe","plugin":{"name":"b","config":{}}}`, EventDescribe,
			`{"name":"budget","version":"1","events":["check","observe"],"state":true}`},
		{"a check reads counters and entries and sends its changes, adds to one key summed", in, EventCheck,
			`{"decision":"allow","code":"n","reason":"xxx","state":{"add":{"calls":2},"set":{"last":"now then"},"delete":["old"]}}`},
		{"the next event starts with no changes", in, EventObserve, ``},
	} {
		code, out := p.Handle(tc.event, []byte(tc.in))
		if code != CodeOK || string(out) != tc.want {
			t.Errorf("%s: code %d, output %s; want %s", tc.name, code, out, tc.want)
		}
		if len(out) > 0 && !json.Valid(out) {
			t.Errorf("%s: output is not JSON: %s", tc.name, out)
		}
	}
	plain := &Plugin{Name: "plain", Version: "1", Check: func(c *Check) Verdict { return NoOpinion() }}
	if _, out := plain.Handle(EventDescribe, []byte(`{}`)); strings.Contains(string(out), "state") {
		t.Errorf("a plugin without State asks for it: %s", out)
	}
}
