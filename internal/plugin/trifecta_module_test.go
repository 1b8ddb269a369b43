package plugin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	pdk "github.com/toolwarden/toolwarden/pdk/go"
	"github.com/toolwarden/toolwarden/plugins/trifecta"
)

// The shipped trifecta module (Rust, plugins/trifecta/rust) and the Go
// reference (plugins/trifecta) give the same return code and the same
// output bytes for every combination of capabilities, session labels,
// tool names that need escaping, and config, on envelopes the host builds.
func TestTrifectaModuleMatchesGoReference(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 1})
	ctx := context.Background()
	names := []string{"send_mail", `say "hi"`, `back\slash`, "new\nline\ttab\rret", "ctl\x01\x1f", "café ☕ 😀",
		strings.Repeat("long_", 80), "", "</script>&"}
	labelSets := [][]string{nil, {trifecta.LabelPrivate}, {trifecta.LabelUntrusted},
		{trifecta.LabelPrivate, trifecta.LabelUntrusted}, {"a", trifecta.LabelPrivate, "m", trifecta.LabelUntrusted, "z"},
		{trifecta.LabelPrivate + "x", trifecta.LabelUntrusted}}
	for _, cfg := range []map[string]any{nil, {"mode": "ask"}, {"mode": "deny"}} {
		p, err := Load(ctx, rt, &config.Policy{Name: "trifecta", Builtin: "trifecta", Config: cfg}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ref := trifecta.New()
		// The module gets its config once per instance (its needs leave it
		// out of check and observe); so does the reference.
		ref.Handle(pdk.EventDescribe, []byte(`{"abi":1,"event":"describe","plugin":{"name":"trifecta","config":`+string(p.config)+`}}`))
		in := p.pool.take()
		p.pool.give(in)
		n := 0
		for caps := 0; caps < 8; caps++ {
			c := hints.Capabilities{ReadsPrivateData: caps&1 != 0, SeesUntrustedContent: caps&2 != 0, CanExfiltrate: caps&4 != 0}
			for _, labels := range labelSets {
				for _, name := range names {
					tool := &hints.Tool{Name: name, HashHex: testTool.HashHex}
					check := in.appendCheck(nil, &policy.CheckInput{Session: "s", Labels: labels, Server: "x", App: "x",
						Tool: tool, Arguments: []byte(`{"k":"v"}`), Caps: c, Baseline: policy.Ask, Mode: config.ModeAuto})
					observe := in.appendObserve(nil, &policy.ObserveInput{Session: "s", Labels: labels, Server: "x", App: "x",
						Tool: tool, Arguments: []byte(`{}`), Caps: c, Result: "ok"})
					for _, e := range []struct {
						ev    Event
						input []byte
					}{{EventCheck, check}, {EventObserve, observe}} {
						got, err := p.Raw(ctx, e.ev, e.input)
						if err != nil {
							t.Fatalf("%s: %v", e.input, err)
						}
						code, want := ref.Handle(uint32(e.ev), e.input)
						if got.Code != code || string(got.Output) != string(want) {
							t.Fatalf("config %v, %s:\nmodule    %d %s\nreference %d %s", cfg, e.input, got.Code, got.Output, code, want)
						}
						n++
					}
				}
			}
		}
		if n != 2*8*len(labelSets)*len(names) {
			t.Fatalf("compared %d events", n)
		}
	}
	// A config the reference refuses, the module refuses with the same text.
	for _, cfg := range []map[string]any{{"mode": "off"}, {"mode": 1}, {"strict": true}} {
		_, err := Load(ctx, rt, &config.Policy{Name: "trifecta", Builtin: "trifecta", Config: cfg}, nil)
		env := []byte(`{"abi":1,"event":"describe","plugin":{"name":"trifecta","config":` + mustJSON(t, cfg) + `}}`)
		code, want := trifecta.New().Handle(pdk.EventDescribe, env)
		if err == nil || code != pdk.CodeBadConfig || !strings.Contains(err.Error(), string(want)) {
			t.Errorf("config %v: module says %v, reference %d %q", cfg, err, code, want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
