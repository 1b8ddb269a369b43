package trifecta

import (
	"testing"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

func TestCheckAndObserve(t *testing.T) {
	env := func(labels, caps, config string) []byte {
		return []byte(`{"session":{"labels":` + labels + `},"call":{"capabilities":` + caps + `,"tool":{"name":"send"}},"plugin":{"config":` + config + `}}`)
	}
	exfil := `{"reads_private_data":false,"sees_untrusted_content":false,"can_exfiltrate":true}`
	both := `["private_data_seen","untrusted_content_seen"]`
	for _, c := range []struct{ labels, caps, config, want string }{
		{both, exfil, `{}`, `{"decision":"ask","code":"lethal_trifecta","reason":"this session has read private data and untrusted content, and \"send\" can send data out (lethal trifecta)"}`},
		{both, exfil, `{"mode":"deny"}`, `{"decision":"deny","code":"lethal_trifecta","reason":"this session has read private data and untrusted content, and \"send\" can send data out (lethal trifecta)"}`},
		{`["private_data_seen"]`, exfil, `{}`, `{"decision":"abstain"}`},
		{both, `{"can_exfiltrate":false}`, `{}`, `{"decision":"abstain"}`},
		{`[]`, exfil, `{}`, `{"decision":"abstain"}`},
	} {
		code, out := New().Handle(pdk.EventCheck, env(c.labels, c.caps, c.config))
		if code != 0 || string(out) != c.want {
			t.Errorf("%s %s %s: %d %s", c.labels, c.caps, c.config, code, out)
		}
	}
	for caps, want := range map[string]string{
		`{"reads_private_data":true,"sees_untrusted_content":true}`: `{"labels":["private_data_seen","untrusted_content_seen"]}`,
		`{"reads_private_data":true}`:                               `{"labels":["private_data_seen"]}`,
		`{"sees_untrusted_content":true}`:                           `{"labels":["untrusted_content_seen"]}`,
		`{}`:                                                        ``,
	} {
		code, out := New().Handle(pdk.EventObserve, env(`[]`, caps, `{}`))
		if code != 0 || string(out) != want {
			t.Errorf("observe %s: %d %s", caps, code, out)
		}
	}
	if code, out := New().Handle(pdk.EventDescribe, env(`[]`, `{}`, `{"mode":"off"}`)); code != pdk.CodeBadConfig {
		t.Errorf("bad mode: %d %s", code, out)
	}
}
