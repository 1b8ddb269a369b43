package plugin

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// The trifecta module's labels and code (plugins/trifecta/rust/lib.rs;
// docs/plugins.md).
const (
	labelPrivate   = "private_data_seen"
	labelUntrusted = "untrusted_content_seen"
	codeTrifecta   = "lethal_trifecta"
)

// trifectaSession plays ops as events of one session, carrying labels as
// the host does (sorted, no duplicates), and checks the rule at every
// step: an observe labels what the call's capabilities say it saw (and
// nothing else); a check of a tool that can send data out in a session
// that has seen both is asked about (or denied), anything else gets no
// opinion; no event ever drops a label. Each op is one byte: bits 0-2 the
// capabilities (private, untrusted, exfiltrate), bit 3 check or observe,
// bit 4 an unrelated label in the session.
func trifectaSession(t testing.TB, p *Plugin, mode string, ops []byte) {
	t.Helper()
	ctx := context.Background()
	var session []string
	for i, op := range ops {
		caps := hints.Capabilities{ReadsPrivateData: op&1 != 0, SeesUntrustedContent: op&2 != 0, CanExfiltrate: op&4 != 0}
		if op&16 != 0 {
			session = addLabels(session, "other:"+string(rune('a'+i%26)))
		}
		tool := &hints.Tool{Name: "tool \"" + string(rune('a'+i%26)) + "\"", HashHex: testTool.HashHex}
		if op&8 == 0 {
			res := p.Observe(ctx, &policy.ObserveInput{Session: "s", Labels: session, Server: "x", App: "x", Tool: tool,
				Arguments: []byte(`{}`), Caps: caps, Result: "ok"})
			var want []string
			if caps.ReadsPrivateData {
				want = append(want, labelPrivate)
			}
			if caps.SeesUntrustedContent {
				want = append(want, labelUntrusted)
			}
			if res.Err != nil || !slices.Equal(res.Labels, want) {
				t.Fatalf("op %d (%05b) in %v: observe labels %v %v, want %v", i, op, session, res.Labels, res.Err, want)
			}
			session = addLabels(session, res.Labels...)
			continue
		}
		in := &policy.CheckInput{Session: "s", Labels: session, Server: "x", App: "x", Tool: tool, Arguments: []byte(`{}`),
			Caps: caps, Baseline: policy.Ask, Mode: config.ModeAuto, Rememberable: true}
		v := p.Check(ctx, in)
		want := policy.Abstain
		if caps.CanExfiltrate && slices.Contains(session, labelPrivate) && slices.Contains(session, labelUntrusted) {
			want = map[string]policy.Verdict{"": policy.Ask, "ask": policy.Ask, "deny": policy.Deny}[mode]
		}
		if v.Err != nil || v.Verdict != want || len(v.Labels) > 0 || want != policy.Abstain &&
			(v.Code != codeTrifecta || v.Remember || !strings.Contains(v.Reason, "can send data out")) {
			t.Fatalf("op %d (%05b) in %v: %+v, want %v", i, op, session, v, want)
		}
	}
}

func addLabels(session []string, labels ...string) []string {
	session = append(slices.Clone(session), labels...)
	slices.Sort(session)
	return slices.Compact(session)
}

func loadTrifecta(t testing.TB, mode string) *Plugin {
	t.Helper()
	var cfg map[string]any
	if mode != "" {
		cfg = map[string]any{"mode": mode}
	}
	p, err := Load(context.Background(), newRuntime(t, Options{PoolSize: 1}), &config.Policy{Name: "trifecta", Builtin: "trifecta", Config: cfg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Trifecta never forgets taint: over every session of up to four events
// (each capability combination, checked or observed, with and without
// unrelated labels), in every mode, the rule holds at each step.
func TestTrifectaNeverForgetsTaint(t *testing.T) {
	for _, mode := range []string{"", "ask", "deny"} {
		p := loadTrifecta(t, mode)
		n := 0
		for a := 0; a < 32; a++ {
			for b := 0; b < 32; b++ {
				trifectaSession(t, p, mode, []byte{byte(a), byte(b), byte(a ^ b), byte(b | 12)})
				n++
			}
		}
		t.Logf("mode %q: %d sessions", mode, n)
		p.Close()
	}
}

// The same for any session. Run:
//
//	go test -run XXX -fuzz FuzzTrifectaNeverForgetsTaint -fuzztime 3m ./internal/plugin/
func FuzzTrifectaNeverForgetsTaint(f *testing.F) {
	f.Add(uint8(0), []byte{1, 2, 12})
	f.Add(uint8(2), []byte{3, 16, 12, 8, 0, 31})
	ps := []*Plugin{loadTrifecta(f, ""), loadTrifecta(f, "ask"), loadTrifecta(f, "deny")}
	f.Fuzz(func(t *testing.T, mode uint8, ops []byte) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		trifectaSession(t, ps[mode%3], []string{"", "ask", "deny"}[mode%3], ops)
	})
}
