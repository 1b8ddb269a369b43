package rawjson_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/rawjson"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	nest := func(n int, inner string) string {
		return strings.Repeat(`{"a":[`, n/2) + inner + strings.Repeat(`]}`, n/2)
	}
	loose := rawjson.Rules{MaxDepth: 10}
	strict := rawjson.Rules{MaxDepth: 10, Strict: true}
	const ok, notJSON, tooDeep = "ok", "not JSON", "too deep"
	cases := []struct {
		name  string
		rules rawjson.Rules
		in    string
		want  string
		msg   string // in the error, when not ok
		at    int    // the error's offset, when not ok
	}{
		{"a scalar alone is a document", loose, ` 1 `, ok, "", 0},
		{"a document at the depth limit is read", loose, nest(10, "1"), ok, "", 0},
		{"one level more is too deep", loose, nest(10, "[]"), tooDeep, "nested deeper than 10", 30},
		{"an empty object past the limit is too deep too", loose, nest(10, "{}"), tooDeep, "nested deeper", 30},
		{"a million levels are too deep, not a crash", loose, nest(1_000_000, "1"), tooDeep, "nested deeper", 30},
		{"too deep and broken is not JSON", loose, nest(12, "1,"), notJSON, "invalid value", 38},
		{"unbalanced brackets are not JSON", loose, strings.Repeat("[", 1000), notJSON, "unexpected end", 1000},
		{"data after the value is not JSON", loose, `{} {}`, notJSON, "unexpected data after the JSON value", 3},
		{"too deep then data after the value is not JSON", loose, nest(12, "1") + "x", notJSON, "unexpected data", 49},
		{"nothing is not JSON", loose, ` `, notJSON, "unexpected end", 1},
		{"a trailing comma is not JSON", loose, `[1,]`, notJSON, "invalid value", 3},
		{"a missing colon is not JSON", loose, `{"a" 1}`, notJSON, "expected :", 5},
		{"a leading zero is not JSON", loose, `[01]`, notJSON, "expected , or ] in array", 2},
		{"without the strict rules a key may come twice", loose, `{"a":1,"a":2}`, ok, "", 0},
		{"without the strict rules a lone surrogate is JSON", loose, `["\ud800"]`, ok, "", 0},
		{"without the strict rules invalid UTF-8 is JSON", loose, "[\"\xff\"]", ok, "", 0},
		{"strict: a key twice is refused at the second", strict, `{"a":1,"a":2}`, notJSON, `key "a" appears twice`, 7},
		{"strict: an escaped key is the key it spells", strict, `{"a":1,"\u0061":2}`, notJSON, "appears twice", 7},
		{"strict: keys differing only in case are refused", strict, `{"path":1,"PATH":2}`, notJSON, "differ only in case", 10},
		{"strict: a lone surrogate is refused", strict, `["x\udc00"]`, notJSON, `lone surrogate \udc00`, 3},
		{"strict: invalid UTF-8 is refused", strict, "[\"\xff\"]", notJSON, "invalid UTF-8", 2},
		{"strict: the same key in two objects is fine", strict, `[{"a":1},{"a":2}]`, ok, "", 0},
		{"strict: a nested object's keys do not count for its parent", strict, `{"a":{"x":1,"y":2},"x":1,"y":{"a":0}}`, ok, "", 0},
		{"strict: a key clash is found after a nested object closes", strict, `{"a":{"x":1},"b":2,"A":3}`, notJSON, "differ only in case", 19},
		{"strict: a clash beside a too-deep member is still refused", strict, `{"a":` + nest(12, "1") + `,"a":1}`, notJSON, "appears twice", 55},
		{"strict: well-formed and too deep is too deep", strict, nest(12, "1"), tooDeep, "nested deeper", 30},
	}
	for _, tc := range cases {
		err := rawjson.Validate([]byte(tc.in), tc.rules)
		var je *rawjson.Error
		got := ok
		switch {
		case err == nil:
		case !errors.As(err, &je):
			t.Errorf("%s: %v is not a *Error", tc.name, err)
			continue
		case je.TooDeep:
			got = tooDeep
		default:
			got = notJSON
		}
		if got != tc.want {
			t.Errorf("%s: %s (%v), want %s", tc.name, got, err, tc.want)
			continue
		}
		if je != nil && (!strings.Contains(je.Msg, tc.msg) || je.Offset != tc.at) {
			t.Errorf("%s: %v, want %q at offset %d", tc.name, err, tc.msg, tc.at)
		}
	}
}

// Keys are compared pairwise while an object has few, then by a map; a
// clash is found on either side of the switch, and a nested object's keys
// never leak into its parent's set.
func TestValidateFindsClashesAcrossTheSwitchToAMap(t *testing.T) {
	t.Parallel()
	strict := rawjson.Rules{MaxDepth: 10, Strict: true}
	keys := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(`"k` + strings.Repeat("x", i) + `":0,`)
		}
		return b.String()
	}
	cases := []struct {
		name  string
		in    string
		clash bool
	}{
		{"many distinct keys", `{` + keys(40) + `"z":0}`, false},
		{"a clash with the first key after many", `{` + keys(40) + `"K":0}`, true},
		{"a clash with a key added after the switch", `{` + keys(40) + `"z":0,"Z":0}`, true},
		{"a clash within the pairwise keys", `{` + keys(5) + `"KX":0}`, true},
		{"a child with many keys, then the parent's own keys", `{"a":{` + keys(40) + `"z":0},"kx":0,"z":0}`, false},
		{"a parent with many keys, a child, then a clash in the parent", `{` + keys(40) + `"c":{"kxx":0},"KXX":0}`, true},
		{"a parent with many keys and a child that reuses them", `{` + keys(40) + `"c":{` + keys(40) + `"z":0}}`, false},
	}
	for _, tc := range cases {
		err := rawjson.Validate([]byte(tc.in), strict)
		if got := err != nil; got != tc.clash {
			t.Errorf("%s: %v, want a clash %v", tc.name, err, tc.clash)
		}
	}
}

// A run of brackets as long as a message may be (the proxy reads lines of
// many megabytes) costs memory, not stack, in both modes.
func TestValidateDoesNotRecurse(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 20<<20)
	deepObjects := strings.Repeat(`{"a":`, 1<<20) + "1" + strings.Repeat("}", 1<<20)
	for _, rules := range []rawjson.Rules{{MaxDepth: 10000}, {MaxDepth: 10000, Strict: true}} {
		var je *rawjson.Error
		if err := rawjson.Validate([]byte(deep), rules); !errors.As(err, &je) || je.TooDeep {
			t.Errorf("strict %v: 20 MB of [ = %v, want not JSON", rules.Strict, err)
		}
		if err := rawjson.Validate([]byte(deepObjects), rules); !errors.As(err, &je) || !je.TooDeep {
			t.Errorf("strict %v: a million nested objects = %v, want too deep", rules.Strict, err)
		}
	}
}

// FuzzValidate holds the validator to encoding/json: without the
// strict rules it accepts what json.Valid accepts, nested at most
// MaxDepth deep, and calls too deep exactly what is valid and deeper;
// with them it also refuses exactly the keys that clash when case is
// folded, invalid UTF-8 and lone surrogates.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,{"b":"c"}]}`, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `{}`, `{"x":"\ud83d\ude00"}`,
		`[[[[[[]]]]]]`, `{"p":"\ud800","P":1}`, "[\"\xff\"]", `{"kind":1,"\u212Aind":2}`, `[1,]`, ` 1 `, `"\udfff"`,
	} {
		f.Add([]byte(s), uint8(3), false)
		f.Add([]byte(s), uint8(3), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, depth uint8, strict bool) {
		rules := rawjson.Rules{MaxDepth: int(depth % 8), Strict: strict}
		err := rawjson.Validate(b, rules)
		var je *rawjson.Error
		if err != nil && !errors.As(err, &je) {
			t.Fatalf("Validate(%q) = %v, not a *Error", b, err)
		}
		valid := json.Valid(b)
		tooDeep := valid && nesting(b) > rules.MaxDepth
		if je != nil && je.TooDeep {
			if !tooDeep {
				t.Fatalf("Validate(%q, %+v): too deep, but valid %v at depth %d", b, rules, valid, nesting(b))
			}
			return
		}
		if !strict {
			if got, want := err == nil, valid && !tooDeep; got != want {
				t.Fatalf("Validate(%q, %+v) = %v, encoding/json valid %v at depth %d", b, rules, err, valid, nesting(b))
			}
			return
		}
		want := valid && utf8.Valid(b) && !testkit.LoneSurrogate(b) && !testkit.FoldClash(b)
		if tooDeep {
			// Keys past MaxDepth are not kept, so a clash there is not
			// found; the document is refused as too deep all the same.
			if err == nil {
				t.Fatalf("Validate(%q, %+v) accepted a document at depth %d", b, rules, nesting(b))
			}
			return
		}
		if got := err == nil; got != want {
			t.Fatalf("Validate(%q, %+v) = %v, want accepted %v", b, rules, err, want)
		}
	})
}

// nesting is how deep the arrays and objects of valid JSON b nest.
func nesting(b []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
