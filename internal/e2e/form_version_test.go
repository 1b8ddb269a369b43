package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// wrap puts its approval form in the shape the client's protocol version
// reads: a 2025-06-18 client gets enum with enumNames (it has no oneOf
// form), a 2025-11-25 client oneOf of titled consts; never both, since a
// client that validates against the first shape that fits drops the other.
func TestWrapAsksEachClientInItsProtocolsFormShape(t *testing.T) {
	t.Parallel()
	for version, want := range map[string]struct{ has, hasNot string }{
		"2025-06-18": {`"enumNames"`, `"oneOf"`},
		"2025-11-25": {`"oneOf"`, `"enumNames"`},
	} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			c := startRaw(t, twBin, wrapArgs(t, "ts", nil, testServer, "-state", t.TempDir())...)
			m := c.call("initialize", json.RawMessage(`{"protocolVersion":"`+version+`","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}`))
			if m.Error != nil {
				t.Fatalf("initialize: %s", m.Error.Message)
			}
			c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			_, res := c.begin("tools/call", writeCall("f"))
			var prompt rawMessage
			eventually(t, 20*time.Second, "the elicitation request", func() bool {
				c.mu.Lock()
				defer c.mu.Unlock()
				if len(c.reqs) == 0 || c.reqs[0].Method != "elicitation/create" {
					return false
				}
				prompt = c.reqs[0]
				return true
			})
			form := string(prompt.Params)
			if !strings.Contains(form, want.has) || strings.Contains(form, want.hasNot) {
				t.Errorf("a %s client's form has %s: %s", version, want.hasNot, form)
			}
			c.send(`{"jsonrpc":"2.0","id":` + string(prompt.ID) + `,"result":{"action":"accept","content":{"decision":"allow_once"}}}`)
			if r := awaitCall(t, res, 10*time.Second); r.IsError || r.Text != "wrote f" {
				t.Fatalf("call after the prompt was answered: %+v", r)
			}
		})
	}
}
