package pdk

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func mustParse(t *testing.T, s string) Value {
	t.Helper()
	v, ok := ParseValue([]byte(s))
	if !ok {
		t.Fatalf("ParseValue(%s) failed", s)
	}
	return v
}

func TestValueAccessors(t *testing.T) {
	v := mustParse(t, ` {"a": {"b": [10, "x\"y", {"c~/d": true}]}, "s": "caf\u00e9", "e": "", "n": null,
		"a\u0062c": 1, "big": 1.5e3, "arr": []} `)
	if got := v.Get("a").Get("b").Index(1).String(); got != `x"y` {
		t.Errorf("escaped string %q", got)
	}
	if got := v.Pointer("/a/b/2/c~0~1d"); !got.True() {
		t.Errorf("pointer with ~0 ~1: %s", got.Raw())
	}
	if got := v.Pointer("/a/b/0").Raw(); string(got) != "10" {
		t.Errorf("pointer to number: %s", got)
	}
	for _, missing := range []string{"/a/b/3", "/a/b/01", "/a/x", "/s/0", "a"} {
		if v.Pointer(missing).Exists() {
			t.Errorf("pointer %q found something", missing)
		}
	}
	if v.Get("s").String() != "café" || !v.Get("s").StrEquals("café") || v.Get("s").StrEquals("cafe") {
		t.Error("unicode escape")
	}
	if !v.Get("abc").Exists() {
		t.Error("escaped key")
	}
	if !v.Get("e").StrEquals("") || v.Get("e").StrEquals("x") {
		t.Error("empty string")
	}
	if v.Get("n").Kind() != Null || v.Get("nope").Kind() != Missing || v.Get("arr").Kind() != Array {
		t.Error("kinds")
	}
	if f, ok := v.Get("big").Float(); !ok || f != 1500 {
		t.Errorf("float %v", f)
	}
	if n := v.Get("a").Get("b").Len(); n != 3 {
		t.Errorf("len %d", n)
	}
	if n := v.Get("arr").Len(); n != 0 {
		t.Errorf("empty array len %d", n)
	}
	var keys []string
	v.Members(func(k string, _ Value) bool { keys = append(keys, k); return true })
	if strings.Join(keys, ",") != "a,s,e,n,abc,big,arr" {
		t.Errorf("members %v", keys)
	}
	if string(v.Get("a").Raw()) != `{"b": [10, "x\"y", {"c~/d": true}]}` {
		t.Errorf("raw %s", v.Get("a").Raw())
	}
}

func TestStrEqualsLooksPastPrefixes(t *testing.T) {
	v := mustParse(t, `["tainted_x", "tainted", "ta\u0069nted", "x\\"]`)
	if v.Index(0).StrEquals("tainted") || !v.Index(1).StrEquals("tainted") || !v.Index(2).StrEquals("tainted") {
		t.Error("StrEquals")
	}
	if !v.Index(3).StrEquals(`x\`) {
		t.Error("backslash")
	}
}

func TestParseValueRejectsInvalidJSON(t *testing.T) {
	for _, s := range []string{`{`, `{"a"}`, `[1,]`, `01`, `"\x"`, `tru`, `{"a":1}x`, "\"\x01\""} {
		if _, ok := ParseValue([]byte(s)); ok {
			t.Errorf("ParseValue(%q) accepted", s)
		}
	}
}

func FuzzParseValueAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1,"a",{"b":null}]`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":{"o":[14]},"\u0070":"15"}`, `"\u00e9\ud83d\ude00"`, `{"a":[true,-1.5e3]}`, `{"a"}`, `"\ud800"`,
		` { "c\u0061ll" : { "x" : [1, {"}":"]"}] } , "k" :"v\"w", "n": -0.5e+3 }`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := ParseValue(b)
		if ok != json.Valid(b) {
			t.Fatalf("ParseValue(%q) ok=%v, encoding/json says %v", b, ok, json.Valid(b))
		}
		if !ok || v.Kind() != Object {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			return
		}
		if !utf8.Valid(b) {
			return // encoding/json replaces invalid UTF-8; Value keeps the bytes
		}
		dup := map[string]int{}
		v.Members(func(k string, _ Value) bool { dup[k]++; return true })
		// The envelope's caching reader agrees with Get, in any order of
		// reads, past its cache's room, and for keys that are absent.
		var e envelope
		e.reset(v)
		for range 2 {
			for k := range m {
				if g, w := e.get(k).Raw(), v.Get(k).Raw(); string(g) != string(w) {
					t.Errorf("cached get(%q) of %q = %q, Get says %q", k, b, g, w)
				}
				// k+"\x00" is usually absent, but the input may hold it too
				// ({"\u0000":{},"":0}): ask encoding/json, not the guess.
				probe := k + "\x00"
				_, present := m[probe]
				if g, w := e.get(probe).Exists(), v.Get(probe).Exists(); g != w || !present && g {
					t.Errorf("cached get(%q) of %q exists=%v, Get says %v, encoding/json %v", probe, b, g, w, present)
				}
			}
		}
		for k, want := range m {
			raw := v.Get(k).Raw()
			if !json.Valid(raw) {
				t.Errorf("Get(%q) of %q = %q", k, b, raw)
				continue
			}
			// With duplicate keys encoding/json keeps the last, Get the first.
			var g, w bytes.Buffer
			if dup[k] == 1 && (json.Compact(&g, raw) != nil || json.Compact(&w, want) != nil || g.String() != w.String()) {
				t.Errorf("Get(%q) of %q = %q, encoding/json says %q", k, b, raw, want)
			}
			var arr []any
			if dup[k] == 1 && json.Unmarshal(want, &arr) == nil {
				el := v.Get(k)
				if el.Len() != len(arr) {
					t.Errorf("Len of %q = %d, encoding/json says %d", want, el.Len(), len(arr))
				}
				for _, x := range arr {
					if s, ok := x.(string); ok && (!el.HasString(s) || el.HasString(s+"\x00") && !slicesContain(arr, s+"\x00")) {
						t.Errorf("HasString(%q) of %q is wrong", s, want)
					}
				}
			}
			if s, ok := v.Get(k).Str(); ok && dup[k] == 1 {
				var ws string
				if json.Unmarshal(want, &ws) != nil || ws != s || !v.Get(k).StrEquals(ws) {
					t.Errorf("Get(%q).Str() of %q = %q, want %q", k, b, s, ws)
				}
			}
		}
		if len(dup) != len(m) {
			t.Errorf("Members of %q found %d keys, encoding/json %d", b, len(dup), len(m))
		}
	})
}

func slicesContain(arr []any, s string) bool {
	for _, x := range arr {
		if x == s {
			return true
		}
	}
	return false
}

// The lazy accessors read the host's input without validating it first:
// on any bytes at all they must return, without panicking.
func FuzzLazyReaderSurvivesAnything(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x\"",{"b":null}],"b":"c"}`, `["a","b\\",`, `{"a":"`, `{"a":{"b":[}}}`, `[`, `{"a"`, `["\u0061"]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, v := range []Value{{b: b}, {b: append([]byte("["), b...)}, {b: append([]byte("{\"a\":"), b...)}} {
			v.Get("a").Get("b")
			v.Len()
			v.HasString("x")
			v.HasString(`a"`)
			v.Index(2).Raw()
			v.Members(func(string, Value) bool { return true })
			v.Each(func(int, Value) bool { return true })
			v.StrEquals("x")
			v.Pointer("/a/0")
			e := envelope{}
			e.reset(v)
			e.Session().HasLabel("x")
			c := Call{&e}
			c.Capabilities()
			c.ToolName()
			c.Hints().Or("readOnlyHint", false)
		}
	})
}
