package policy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

func TestCheckArguments(t *testing.T) {
	t.Parallel()
	ok := []string{
		``, `null`, ` {} `, `{"a":1}`, `{"a":{"b":[1,2,{"c":"d"}]},"b":-1.5e+3}`,
		`{"a":{"x":1},"b":{"x":2}}`, // the same key in two objects is fine
		`{"path":"/tmp/é","t":true,"f":false,"n":null}`,
		`{"x":"\ud83d\ude00","\uD83D\uDE00":1}`, // a surrogate pair is one character
		`{"a":{"path":1},"b":{"PATH":2}}`,       // cases differ only across objects
	}
	for _, s := range ok {
		if err := policy.CheckArguments([]byte(s)); err != nil {
			t.Errorf("CheckArguments(%q) = %v", s, err)
		}
	}
	bad := map[string]string{
		`[1]`:                                 "must be a JSON object",
		`"x"`:                                 "must be a JSON object",
		`{"path":"/ok","path":"/etc/passwd"}`: "appears twice",
		`{"path":"/ok","p\u0061th":"/etc"}`:   "appears twice",
		`{"a":{"k":1,"k":2}}`:                 "appears twice",
		`{"a":1`:                              "unexpected end",
		`{"a":1}{}`:                           "after the arguments",
		`{"a":01}`:                            "expected , or }",
		`{"a":"\x"}`:                          "bad escape",
		"{\"a\":\"\xff\"}":                    "invalid UTF-8",
		"{\"a\":\"\x01\"}":                    "control character",
		`{"a":tru}`:                           "invalid value",
		`{"path":"/ok","PATH":"/etc"}`:        "differ only in case",
		`{"path":"/ok","P\u0041th":"/etc"}`:   "differ only in case",
		`{"kind":1,"\u212Aind":2}`:            "differ only in case",
		`{"p":"\ud800"}`:                      "lone surrogate",
		`{"p":"\udfff"}`:                      "lone surrogate",
		`{"p":"\udc00\ud800"}`:                "lone surrogate",
		`{"p":"\ud800x"}`:                     "lone surrogate",
		`{"\ud800":1}`:                        "lone surrogate",
		strings.Repeat(`{"a":`, 300) + `1` + strings.Repeat(`}`, 300): "nested deeper",
	}
	for in, want := range bad {
		err := policy.CheckArguments([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckArguments(%.40q) = %v, want %q", in, err, want)
		}
	}
}

func TestCheckArgumentsFindsCaseClashesAmongManyKeys(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("{")
	for i := range 1000 {
		fmt.Fprintf(&b, `"key%d":%d,`, i, i)
	}
	ok := b.String() + `"last":0}`
	if err := policy.CheckArguments([]byte(ok)); err != nil {
		t.Fatalf("1000 distinct keys: %v", err)
	}
	for _, clash := range []string{`"KEY500":0}`, `"key999":0}`, `"Key0":0}`} {
		if err := policy.CheckArguments([]byte(b.String() + clash)); err == nil {
			t.Errorf("1000 keys then %s: accepted", clash)
		}
	}
}

// FuzzCheckArguments: never panics, and agrees with encoding/json on validity
// for inputs without duplicate keys.
func FuzzCheckArguments(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c"}]}`, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `{}`, `{"x":"\ud83d\ude00"}`} {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"p":"\ud800","P":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		err := policy.CheckArguments(b)
		if err != nil {
			return
		}
		// What is accepted, every reader reads alike: valid JSON that
		// encoding/json decodes without loss, no key twice even when case
		// is folded.
		t0 := bytes.TrimSpace(b)
		if len(t0) == 0 || string(t0) == "null" {
			return
		}
		var m map[string]any
		if json.Unmarshal(b, &m) != nil || !utf8.Valid(b) {
			t.Fatalf("CheckArguments accepted %q", b)
		}
		if testkit.LoneSurrogate(b) {
			t.Fatalf("CheckArguments accepted a lone surrogate: %q", b)
		}
		if testkit.FoldClash(b) {
			t.Fatalf("CheckArguments accepted keys that clash when case is folded: %q", b)
		}
	})
}
