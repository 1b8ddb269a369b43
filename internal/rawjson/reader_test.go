package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// readAll reads doc as one value with a Reader and checks nothing follows.
func readAll(doc []byte, maxDepth int) error {
	r := NewReader(doc, maxDepth)
	if err := r.SkipValue(); err != nil {
		return err
	}
	return r.End()
}

func TestReaderSaysWhereAndWhyItRefusesADocument(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`{"a":1,"b":[true,null,"x"]}`, ""},
		{``, "unexpected end of JSON at offset 0"},
		{`{"a" 1}`, "expected ':' at offset 5"},
		{`{"a":1 "b":2}`, "expected ',' or '}' at offset 7"},
		{`[1 2]`, "expected ',' or ']' at offset 3"},
		{`{1:2}`, "expected a member name at offset 1"},
		{`[tru]`, "invalid literal at offset 1"},
		{`[-]`, "invalid number at offset 2"},
		{`[1.]`, "invalid number at offset 3"},
		{`[1e+]`, "invalid number at offset 4"},
		{`[+1]`, "invalid character '+' at offset 1"},
		{"[\"a\x01\"]", "control character in string at offset 3"},
		{`["abc`, "unterminated string at offset 5"},
		{`["ab\`, "unterminated string at offset 5"},
		{`["a\x"]`, "invalid escape at offset 4"},
		{`["a\u12G4"]`, "invalid \\u escape at offset 5"},
		{`["\ud800\uZZZZ"]`, "invalid \\u escape at offset 10"},
		{`{} x`, "unexpected data after the JSON value at offset 3"},
		{strings.Repeat("[", 4) + strings.Repeat("]", 4), ""},
		{strings.Repeat("[", 5) + strings.Repeat("]", 5), "JSON nested too deeply at offset 5"},
		{strings.Repeat("[", 1_000_000), "JSON nested too deeply at offset 5"},
	}
	for _, tc := range cases {
		got := ""
		if err := readAll([]byte(tc.in), 4); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%.40q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReaderDecodesStringsAsEncodingJSONAndKeepsBytesThatAreNotUTF8(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`"plain"`:              "plain",
		`"a\"b\\c\/d\n\t"`:     "a\"b\\c/d\n\t",
		`"\u00e9\ud83d\ude00"`: "é😀",
		`"\ud800x"`:            "\uFFFDx",
		`"\udc00\ud800"`:       "\uFFFD\uFFFD",
		`"\ud800\u0041"`:       "\uFFFDA",
		"\"a\xffb\"":           "a\xffb",
	}
	for in, want := range cases {
		r := NewReader([]byte(in), 1)
		got, err := r.StringValue()
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
}

func TestReaderReadsMembersNullsAndBooleans(t *testing.T) {
	t.Parallel()
	r := NewReader([]byte(` {"k\u0065y" : true, "n": null, "s":"v", "x":{"y":[]}} `), 8)
	more, err := r.BeginObject()
	seen := map[string]string{}
	for err == nil && more {
		var k []byte
		if k, err = r.Key(); err != nil {
			break
		}
		key := string(k)
		switch {
		case r.Null():
			seen[key] = "null"
		case key == "key":
			var v bool
			v, err = r.BoolValue()
			seen[key] = map[bool]string{true: "true", false: "false"}[v]
		case key == "s":
			seen[key], err = r.StringValue()
		default:
			seen[key], err = "skipped", r.SkipValue()
		}
		if err == nil {
			more, err = r.More('}')
		}
	}
	if err == nil {
		err = r.End()
	}
	if err != nil || seen["key"] != "true" || seen["n"] != "null" || seen["s"] != "v" || seen["x"] != "skipped" {
		t.Fatalf("read %v, %v", seen, err)
	}
}

// FuzzReaderAgreesWithValidate holds the pull reader to the validator: one
// grammar and one depth rule, so that a plugin's output is read as it is
// checked; and it decodes strings as encoding/json does.
func FuzzReaderAgreesWithValidate(f *testing.F) {
	for _, c := range corpus {
		f.Add([]byte(c), uint8(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, depth uint8) {
		d := int(depth % 8)
		err := readAll(b, d)
		if verr := Validate(b, Rules{MaxDepth: d}); (err == nil) != (verr == nil) {
			t.Fatalf("%q at depth %d: reader %v, Validate %v", b, d, err, verr)
		}
		if err != nil || !utf8.Valid(b) {
			return
		}
		r := NewReader(b, d)
		if r.Peek() != '"' {
			return
		}
		var want string
		got, serr := r.StringValue()
		if json.Unmarshal(b, &want) != nil || serr != nil || got != want {
			t.Fatalf("%q reads as %q (%v), encoding/json %q", b, got, serr, want)
		}
	})
}
