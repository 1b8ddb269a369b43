package hints_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/hints"
)

func mustParse(t *testing.T, raw string) *hints.Tool {
	t.Helper()
	tool, err := hints.ParseTool([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func TestParseToolReadsEveryKnownHint(t *testing.T) {
	t.Parallel()
	ann := map[string]bool{}
	for i, n := range hints.Names() {
		ann[n] = i%2 == 0
	}
	raw, _ := json.Marshal(map[string]any{"name": "x", "annotations": ann})
	tool := mustParse(t, string(raw))
	for h := hints.Hint(0); h < hints.Count; h++ {
		if got, want := tool.Declared[h], hints.Of(int(h)%2 == 0); got != want {
			t.Errorf("%s = %s, want %s", h, got, want)
		}
	}
}

func TestParseTool(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, raw string
		hint      hints.Hint
		want      hints.Tri
		malformed bool
	}{
		{"a missing hint is unset", `{"name":"a"}`, hints.ReadOnly, hints.Unset, false},
		{"null is the same as absent", `{"name":"a","annotations":{"readOnlyHint":null}}`, hints.ReadOnly, hints.Unset, false},
		{"a string readOnlyHint counts as false", `{"name":"a","annotations":{"readOnlyHint":"true"}}`, hints.ReadOnly, hints.False, true},
		{"a numeric destructiveHint counts as true", `{"name":"a","annotations":{"destructiveHint":0}}`, hints.Destructive, hints.True, true},
		{"a namespaced _meta hint is read", `{"name":"a","_meta":{"com.example/sensitiveDataHint":true}}`, hints.SensitiveData, hints.True, false},
		{"a capability in _meta is read", `{"name":"a","_meta":{"dev.toolwarden/can_exfiltrate":false}}`, hints.CanExfiltrate, hints.False, false},
		{"an un-namespaced _meta key is not a hint", `{"name":"a","_meta":{"readOnlyHint":true}}`, hints.ReadOnly, hints.Unset, false},
		{"annotations win over _meta", `{"name":"a","annotations":{"readOnlyHint":false},"_meta":{"x/readOnlyHint":true}}`, hints.ReadOnly, hints.False, false},
		{"camelCase capability names are accepted", `{"name":"a","annotations":{"readsPrivateData":true}}`, hints.ReadsPrivateData, hints.True, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tool := mustParse(t, c.raw)
			if got := tool.Declared[c.hint]; got != c.want {
				t.Errorf("%s = %s, want %s", c.hint, got, c.want)
			}
			if (len(tool.Malformed) > 0) != c.malformed {
				t.Errorf("malformed = %v", tool.Malformed)
			}
		})
	}
}

func TestParseToolErrors(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{``, `[]`, `{"name":""}`, `{"name":1}`, `{"name":"a","inputSchema":{`} {
		if _, err := hints.ParseTool([]byte(raw)); err == nil {
			t.Errorf("ParseTool(%q) succeeded", raw)
		}
	}
}

func TestParseToolTakesTitleFromAnnotations(t *testing.T) {
	t.Parallel()
	if got := mustParse(t, `{"name":"a","annotations":{"title":"Nice"}}`).Title; got != "Nice" {
		t.Errorf("title = %q", got)
	}
	if got := mustParse(t, `{"name":"a","title":"Top","annotations":{"title":"Nice"}}`).Title; got != "Top" {
		t.Errorf("title = %q", got)
	}
}

func TestDefinitionHashIgnoresKeyOrderAndSpacing(t *testing.T) {
	t.Parallel()
	a := mustParse(t, `{"name":"a","description":"d","inputSchema":{"type":"object","properties":{"p":{"type":"string"}}},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
	b := mustParse(t, `{ "annotations": {"openWorldHint": false, "readOnlyHint": true},
		"inputSchema": {"properties": {"p": {"type": "string"}}, "type": "object"}, "description": "d", "name": "a", "_meta": {"other": 1} }`)
	if a.HashHex != b.HashHex {
		t.Errorf("hashes differ: %s vs %s", a.HashHex, b.HashHex)
	}
	if len(a.HashHex) != 64 {
		t.Errorf("hash hex %q", a.HashHex)
	}
}

func TestDefinitionHashChangesWithEveryPinnedField(t *testing.T) {
	t.Parallel()
	base := `{"name":"a","title":"T","description":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true},"_meta":{"x/sensitiveDataHint":false}}`
	h0 := mustParse(t, base).HashHex
	for _, change := range []string{
		strings.Replace(base, `"d"`, `"d2"`, 1),
		strings.Replace(base, `"T"`, `"T2"`, 1),
		strings.Replace(base, `"object"`, `"string"`, 1),
		strings.Replace(base, `"readOnlyHint":true`, `"readOnlyHint":false`, 1),
		strings.Replace(base, `"x/sensitiveDataHint":false`, `"x/sensitiveDataHint":true`, 1),
	} {
		if mustParse(t, change).HashHex == h0 {
			t.Errorf("hash unchanged for %s", change)
		}
	}
}

func TestEffective(t *testing.T) {
	t.Parallel()
	var declared hints.Set
	declared.Put(hints.ReadOnly, hints.True)
	declared.Put(hints.OpenWorld, hints.False)
	declared.Put(hints.SensitiveData, hints.True)

	eff, n := hints.Effective(&declared, hints.Full, false)
	if !eff.IsReadOnly() || eff.IsOpenWorld() || n.Ignored != 0 {
		t.Errorf("full: %s %+v", eff.String(), n)
	}
	eff, n = hints.Effective(&declared, hints.None, false)
	if eff.IsReadOnly() || !eff.IsOpenWorld() || eff[hints.SensitiveData] != hints.True || n.Ignored != 2 {
		t.Errorf("none: %s %+v", eff.String(), n)
	}
	eff, n = hints.Effective(&declared, hints.Pinned, false)
	if !eff.IsReadOnly() || n.Distrusted {
		t.Errorf("pinned: %s %+v", eff.String(), n)
	}
	eff, n = hints.Effective(&declared, hints.Pinned, true)
	if eff.IsReadOnly() || !n.Distrusted {
		t.Errorf("pinned after drift: %s %+v", eff.String(), n)
	}
	var over hints.Set
	over.Put(hints.ReadOnly, hints.True)
	eff, n = hints.Effective(&declared, hints.None, false, &over)
	if !eff.IsReadOnly() || n.Overridden != 1 {
		t.Errorf("override: %s %+v", eff.String(), n)
	}
}

func TestDestructiveBeatsReadOnly(t *testing.T) {
	t.Parallel()
	var d hints.Set
	d.Put(hints.ReadOnly, hints.True)
	d.Put(hints.Destructive, hints.True)
	eff, n := hints.Effective(&d, hints.Full, false)
	if eff.IsReadOnly() || !eff.IsDestructive() || !n.Conflict {
		t.Errorf("%s %+v", eff.String(), n)
	}
}

func TestSpecDefaults(t *testing.T) {
	t.Parallel()
	var none hints.Set
	if none.IsReadOnly() || !none.IsDestructive() || !none.IsOpenWorld() {
		t.Error("unset hints must read as not read-only, destructive, open-world")
	}
	var ro hints.Set
	ro.Put(hints.ReadOnly, hints.True)
	if ro.IsDestructive() {
		t.Error("a read-only tool without destructiveHint is not destructive (MCP spec)")
	}
	c := none.Capabilities()
	if c.ReadsPrivateData || !c.SeesUntrustedContent || !c.CanExfiltrate {
		t.Errorf("default capabilities %+v", c)
	}
	var s hints.Set
	s.Put(hints.SensitiveData, hints.True)
	s.Put(hints.OpenWorld, hints.False)
	c = s.Capabilities()
	if !c.ReadsPrivateData || c.SeesUntrustedContent || c.CanExfiltrate {
		t.Errorf("sensitive closed-world capabilities %+v", c)
	}
	s.Put(hints.CanExfiltrate, hints.True)
	if !s.Capabilities().CanExfiltrate {
		t.Error("an explicit capability must win over openWorldHint")
	}
}

func TestSetMarshalJSON(t *testing.T) {
	t.Parallel()
	var s hints.Set
	s.Put(hints.ReadOnly, hints.True)
	s.Put(hints.CanExfiltrate, hints.False)
	b, _ := json.Marshal(s)
	if string(b) != `{"readOnlyHint":true,"can_exfiltrate":false}` {
		t.Errorf("got %s", b)
	}
}

func TestParseTrust(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]hints.Trust{"": hints.Pinned, "pinned": hints.Pinned, "full": hints.Full, "none": hints.None} {
		if got, err := hints.ParseTrust(in); err != nil || got != want {
			t.Errorf("ParseTrust(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := hints.ParseTrust("some"); err == nil || !strings.Contains(err.Error(), `"full"`) {
		t.Errorf("ParseTrust(some) error = %v", err)
	}
}

// FuzzParseTool: the annotation parser never panics, and whatever it accepts
// hashes stably.
func FuzzParseTool(f *testing.F) {
	for _, s := range []string{
		`{"name":"a"}`,
		`{"name":"a","annotations":{"readOnlyHint":true,"destructiveHint":"x"}}`,
		`{"name":"a","_meta":{"a/b/readOnlyHint":true,"connector_id":"c"},"inputSchema":{"type":"object","properties":{"n":{"type":"number","default":1.50}}}}`,
		`{"name":"a","title":"t","annotations":{"title":5}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		tool, err := hints.ParseTool(raw)
		if err != nil {
			return
		}
		again, err := hints.ParseTool(tool.Raw)
		if err != nil || again.HashHex != tool.HashHex || again.Declared != tool.Declared {
			t.Fatalf("reparse differs: %v", err)
		}
	})
}
