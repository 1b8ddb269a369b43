package plugin

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// The list envelope shows each tool's effective hints ("hints", what a
// check decides by) next to the declared ones; a tool the host gave no
// effective hints for shows none (the spec's pessimistic defaults), never
// its declared ones.
func TestListEnvelopeCarriesEffectiveAndDeclaredHints(t *testing.T) {
	rt := newRuntime(t, Options{Now: func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }})
	p, err := newPlugin(rt, &config.Policy{Name: "hider"})
	if err != nil {
		t.Fatal(err)
	}
	p.config = []byte(`{}`)
	for ev := range p.head {
		p.head[ev] = head(Event(ev))
	}
	p.tail = tail(p.name, p.config)
	in := &instance{p: p}

	var declared, effective hints.Set
	declared.Put(hints.ReadOnly, hints.True)
	effective.Put(hints.ReadOnly, hints.False) // distrusted (trust none)
	effective.Put(hints.ReadsPrivateData, hints.True)
	read := &hints.Tool{Name: "read", HashHex: "aa", Declared: declared}
	other := &hints.Tool{Name: "other", HashHex: "bb", Declared: declared}
	got := string(in.appendList(nil, &policy.ListInput{Session: "s", Server: "fs", App: "fs",
		Tools: []*hints.Tool{read, other}, Hints: []hints.Set{effective}}))
	want := `{"abi":1,"event":"list","session":{"id":"s","labels":[]},"server":"fs","app":"fs","tools":[` +
		`{"name":"read","title":"","definition_hash":"aa","hints":{"readOnlyHint":false,"reads_private_data":true},"declared_hints":{"readOnlyHint":true}},` +
		`{"name":"other","title":"","definition_hash":"bb","hints":{},"declared_hints":{"readOnlyHint":true}}],` +
		`"time":"2026-05-01T12:00:00Z","plugin":{"name":"hider","config":{}}}`
	if got != want {
		t.Errorf("list envelope:\n got %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(got)) {
		t.Error("not valid JSON")
	}
}
