package channel

import (
	"encoding/json"
	"testing"
)

// Each protocol version gets the one enum shape it defines, never both in
// one field: the TypeScript SDK keeps only the first shape that matches,
// and with enum present that was enum/enumNames, dropping the oneOf.
func TestTheFormHasOneEnumShapePerProtocolVersion(t *testing.T) {
	t.Parallel()
	q := NewQuestion("fs__write_file", askDecision(true), json.RawMessage(`{"path":"/tmp/x"}`), true)
	type field struct {
		Enum      []string            `json:"enum"`
		EnumNames []string            `json:"enumNames"`
		OneOf     []map[string]string `json:"oneOf"`
	}
	read := func(t *testing.T, version string) field {
		t.Helper()
		p := q.ParamsFor(version)
		if err := p.Validate(); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(p.RequestedSchema)
		var s struct {
			Properties map[string]field `json:"properties"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		return s.Properties[Field]
	}
	for _, v := range []string{"", "2025-11-25", "2026-07-28"} {
		f := read(t, v)
		if f.Enum != nil || f.EnumNames != nil || len(f.OneOf) != len(q.Options) {
			t.Errorf("version %q: %+v, want oneOf alone", v, f)
		}
		for i, o := range f.OneOf {
			if o["const"] != q.Options[i] || o["title"] != q.title(q.Options[i]) {
				t.Errorf("version %q: option %d is %v", v, i, o)
			}
		}
	}
	for _, v := range []string{"2025-06-18", "2025-03-26"} {
		f := read(t, v)
		if f.OneOf != nil || len(f.Enum) != len(q.Options) || len(f.EnumNames) != len(q.Options) {
			t.Errorf("version %q: %+v, want enum and enumNames alone", v, f)
		}
		for i, o := range q.Options {
			if f.Enum[i] != o || f.EnumNames[i] != q.title(o) {
				t.Errorf("version %q: option %d is %s %q", v, i, f.Enum[i], f.EnumNames[i])
			}
		}
	}
}
