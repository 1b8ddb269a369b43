package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckTellsATooDeepMessageFromOneThatIsNotJSON(t *testing.T) {
	t.Parallel()
	nest := func(n int, inner string) string {
		return strings.Repeat(`{"a":[`, n/2) + inner + strings.Repeat(`]}`, n/2)
	}
	cases := []struct {
		name string
		in   string
		want Status
	}{
		{"a message at the depth limit is read", nest(MaxDepth, "1"), OK},
		{"one level more is too deep", nest(MaxDepth, "[]"), TooDeep},
		{"an empty object past the limit is too deep too", nest(MaxDepth, "{}"), TooDeep},
		{"a million levels are too deep, not a crash", nest(1_000_000, "1"), TooDeep},
		{"too deep and broken is not JSON", nest(MaxDepth+2, "1,"), Invalid},
		{"unbalanced brackets are not JSON", strings.Repeat("[", MaxDepth+5), Invalid},
		{"a request whose arguments are too deep", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":` + nest(MaxDepth+2, "1") + `}}`, TooDeep},
	}
	for _, tc := range cases {
		if got := Check([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: Check = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestKeysMatchExactlyAndCaseFoldingIsFound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		key         string
		is, folds   bool
		description string
	}{
		{`name`, true, false, "the key itself"},
		{`n\u0061me`, true, false, "an escaped spelling of the key"},
		{`NAME`, false, true, "another case"},
		{`N\u0041me`, false, true, "another case, escaped"},
		{`\u212Aind`, false, false, "not this key"},
		{`names`, false, false, "a longer key"},
		{`nam\ud800`, false, false, "a lone surrogate"},
		{"nam\xff", false, false, "an invalid byte"},
	}
	for _, tc := range cases {
		if got := KeyIs([]byte(tc.key), "name"); got != tc.is {
			t.Errorf("%s: KeyIs(%q) = %v", tc.description, tc.key, got)
		}
		if got := KeyFolds([]byte(tc.key), "name"); got != tc.folds {
			t.Errorf("%s: KeyFolds(%q) = %v", tc.description, tc.key, got)
		}
	}
	// The Kelvin sign folds to k, for encoding/json as for bytes.EqualFold.
	if !KeyFolds([]byte(`\u212Aind`), "kind") || !KeyFolds([]byte("\u212Aind"), "kind") {
		t.Error("the Kelvin sign must fold to k")
	}
}

func TestIDsCompareByExactTypeAndValue(t *testing.T) {
	t.Parallel()
	same := [][2]string{
		{`2`, `2`}, {`"2"`, `"2"`}, {`"2"`, `"\u0032"`}, {`-0`, `0`}, {`"\ud800"`, `"\ud800"`},
		{`9007199254740991`, `9007199254740991`}, {`-9007199254740991`, `-9007199254740991`},
	}
	differ := [][2]string{
		{`"2"`, `2`}, {`2`, `2.0`}, {`2`, `2e0`}, {`"\ud800"`, `"\udfff"`}, {`"\ud800"`, `"\ufffd"`},
		{`1`, `-1`}, {"\"\xff\"", "\"\xfe\""}, {`"a"`, `"A"`},
	}
	for _, p := range same {
		if !SameID([]byte(p[0]), []byte(p[1])) {
			t.Errorf("%s and %s must be one id", p[0], p[1])
		}
	}
	for _, p := range differ {
		if SameID([]byte(p[0]), []byte(p[1])) {
			t.Errorf("%s and %s must be different ids", p[0], p[1])
		}
	}
	for _, bad := range []string{`null`, `true`, `false`, `1.5`, `2.0`, `2e0`, `{"a":1}`, `[1]`, `9007199254740992`, `-9007199254740992`, `01`, ``} {
		if IsID([]byte(bad)) {
			t.Errorf("%q is not an id MCP allows", bad)
		}
	}
}

func TestPeekIDReadsTheIDOfAMessageThatCannotBeReadWhole(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	cases := []struct {
		name, in, want string
	}{
		{"id before deep params", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":` + deep + `}`, `7`},
		{"id after deep params", `{"jsonrpc":"2.0","method":"tools/call","params":` + deep + `,"id":"x"}`, `"x"`},
		{"id before a syntax error", `{"id":"a","method":"tools/call","params":{"name":}`, `"a"`},
		{"id after a syntax error cannot be read", `{"method":"tools/call","params":{"name":},"id":3}`, ``},
		{"two ids cannot be told apart", `{"id":1,"params":` + deep + `,"id":2}`, ``},
		{"a null id is no id", `{"id":null,"params":` + deep + `}`, ``},
		{"a fractional id is no id", `{"id":1.5,"params":` + deep + `}`, ``},
		{"an id in another case is no id", `{"ID":1,"params":` + deep + `}`, ``},
		{"not an object", `[1,2`, ``},
	}
	for _, tc := range cases {
		id, ok := PeekID([]byte(tc.in))
		if string(id) != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: PeekID = %q %v, want %q", tc.name, id, ok, tc.want)
		}
	}
}

func TestCanonicalKeepsLoneSurrogatesApart(t *testing.T) {
	t.Parallel()
	distinct := []string{`{"p":"\ud800"}`, `{"p":"\udfff"}`, `{"p":"\ufffd"}`, "{\"p\":\"\xff\"}", "{\"p\":\"\xfe\"}", `{"p":"\\ud800"}`, `{"p":"\udc00\ud800"}`}
	seen := map[string]string{}
	for _, in := range distinct {
		c, err := Canonical([]byte(in))
		if err != nil {
			t.Fatalf("Canonical(%s): %v", in, err)
		}
		if prev, dup := seen[string(c)]; dup {
			t.Errorf("%s and %s have one canonical form %s", prev, in, c)
		}
		seen[string(c)] = in
	}
	same := [][2]string{
		{`{"b":1, "a":[1,{"y":2,"x":"\u00e9"}]}`, `{"a":[1,{"x":"é","y":2}],"b":1}`},
		{`{"p":"\ud83d\ude00"}`, `{"p":"😀"}`},
		{`{"p":"\/"}`, `{"p":"/"}`},
	}
	for _, p := range same {
		a, _ := Canonical([]byte(p[0]))
		b, _ := Canonical([]byte(p[1]))
		if !bytes.Equal(a, b) {
			t.Errorf("%s and %s differ: %s / %s", p[0], p[1], a, b)
		}
	}
	if _, err := Canonical([]byte(`{"a":1,"\u0061":2}`)); err == nil {
		t.Error("a key twice in one object must be an error")
	}
}

// encodingJSONCanonical is the canonical form as encoding/json writes it,
// which Canonical matches for values it decodes without loss.
func encodingJSONCanonical(b []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// lossless reports whether encoding/json decodes every string of b
// without loss: valid UTF-8 and no lone surrogate.
func lossless(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	ok := true
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\\' {
			if b[i+1] == 'u' && i+5 < len(b) {
				if u, hok := hex4(b, i+2); hok && u >= 0xD800 && u < 0xE000 {
					ok = false // paired or not: keep the oracle simple
				}
			}
			i++
		}
	}
	return ok
}

var strictCorpus = []string{
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"m":"\ud800"}}}`,
	`{"id":"2","result":{}}`, `{"id":2.0,"result":{}}`, `{"id":2e0,"result":{}}`, `{"id":true}`, `{"id":{"a":1}}`,
	`{"b":1,"a":{"d":[1,"x\n\u2028<"],"c":null}}`, `{"a":1,"a":2}`, `"\udfff"`, "\"\x00\"",
}

func FuzzCheck(f *testing.F) {
	for _, c := range append(corpus, strictCorpus...) {
		f.Add([]byte(c))
	}
	open, closeAll := strings.Repeat("[", MaxDepth), strings.Repeat("]", MaxDepth)
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Check(b) == OK, json.Valid(b); got != want {
			t.Fatalf("Check(%q) = %d, encoding/json valid %v", b, Check(b), want)
		}
		// At the depth limit, a value that nests once more is too deep:
		// b inside MaxDepth brackets is well-formed exactly when b inside
		// one pair is, and too deep when one of its elements nests.
		wrapped := []byte(open + string(b) + closeAll)
		want := Invalid
		var elems []json.RawMessage
		if json.Unmarshal([]byte("["+string(b)+"]"), &elems) == nil {
			want = OK
			for _, e := range elems {
				if e[0] == '{' || e[0] == '[' {
					want = TooDeep
				}
			}
		}
		if want == TooDeep {
			id, ok := PeekID([]byte(`{"id":5,"params":` + string(wrapped) + `}`))
			if !ok || string(id) != "5" {
				t.Fatalf("PeekID past %q = %q %v", b, id, ok)
			}
		}
	})
}

func FuzzCanonical(f *testing.F) {
	for _, c := range append(corpus, strictCorpus...) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Canonical(b)
		if !json.Valid(b) {
			if err == nil {
				t.Fatalf("Canonical(%q) accepted what is not JSON", b)
			}
			return
		}
		if err != nil {
			return // a duplicate key
		}
		again, err := Canonical(got)
		if lossless(b) {
			want, werr := encodingJSONCanonical(b)
			if werr != nil || !bytes.Equal(got, want) {
				t.Fatalf("Canonical(%q) = %q, encoding/json writes %q", b, got, want)
			}
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("Canonical is not idempotent on %q: %q then %q (%v)", b, got, again, err)
			}
		}
	})
}

func FuzzIDKey(f *testing.F) {
	for _, c := range []string{`1`, `-0`, `"a"`, `"\u0032"`, `2.0`, `2e0`, `9007199254740991`, `9007199254740992`, `"\ud800"`, `null`, `true`, `{}`} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		key, ok := IDKey(b)
		if !ok {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("IDKey(%q) = %q for what is not JSON", b, key)
		}
		switch Kind(b) {
		case '"':
			var s string
			if json.Unmarshal(b, &s) != nil || key[0] != 's' {
				t.Fatalf("IDKey(%q) = %q", b, key)
			}
		case '0':
			var n int64
			if json.Unmarshal(b, &n) != nil || n > MaxSafeInteger || n < -MaxSafeInteger || key[0] != 'i' {
				t.Fatalf("IDKey(%q) = %q for a number that is not a safe integer", b, key)
			}
		default:
			t.Fatalf("IDKey(%q) = %q for neither a string nor a number", b, key)
		}
		if !SameID(b, b) {
			t.Fatalf("%q is not the same id as itself", b)
		}
	})
}
