package plugin

import (
	"strings"
	"testing"
)

// The "arguments" key of a verdict (pdk/ABI.md 5.2): an array of at most
// 16 strings, each a top-level name or a JSON pointer of at most 256
// bytes. Any other shape is a bad output, which fails the event.
func TestParseCheckArguments(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, out string
		want      string // joined arguments
		err       string
	}{
		{"names and pointers are read as given", `{"decision":"ask","arguments":["path","/options/url","/a~1b"]}`, "path,/options/url,/a~1b", ""},
		{"null is absent", `{"decision":"ask","arguments":null}`, "", ""},
		{"an empty array flags nothing", `{"decision":"deny","arguments":[]}`, "", ""},
		{"escapes are decoded", `{"decision":"ask","arguments":["p\u0061th"]}`, "path", ""},
		{"a string is not an array", `{"decision":"ask","arguments":"path"}`, "", "expected an array of strings"},
		{"a number in the array", `{"decision":"ask","arguments":["path",1]}`, "", "expected a string"},
		{"an empty name", `{"decision":"ask","arguments":[""]}`, "", "empty argument name"},
		{"a name over 256 bytes", `{"decision":"ask","arguments":["` + strings.Repeat("p", 257) + `"]}`, "", "longer than 256 bytes"},
		{"a pointer with a bad escape", `{"decision":"ask","arguments":["/a~2"]}`, "", `"~" not followed by 0 or 1`},
		{"seventeen names", `{"decision":"ask","arguments":[` + strings.Repeat(`"a",`, 16) + `"a"]}`, "", "more than 16 entries"},
		{"a lone surrogate reads as U+FFFD, as in every string of a verdict", `{"decision":"ask","arguments":["\ud800"]}`, "\uFFFD", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := parseCheck([]byte(tc.out))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || strings.Join(v.Arguments, ",") != tc.want {
				t.Fatalf("arguments %q, err %v; want %q", v.Arguments, err, tc.want)
			}
		})
	}
}
