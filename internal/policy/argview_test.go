package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// lineFor returns the line whose path is path, or nil.
func lineFor(v *ArgumentsView, path string) *ArgumentLine {
	for i := range v.Lines {
		if v.Lines[i].Path == path {
			return &v.Lines[i]
		}
	}
	return nil
}

// nested builds {"a":{"a":...{leaf}}} depth levels deep.
func nested(depth int, leaf string) string {
	return strings.Repeat(`{"a":`, depth) + leaf + strings.Repeat(`}`, depth)
}

func manyKeys(n int, extra string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `"k%04d":%d,`, i, i)
	}
	b.WriteString(extra)
	b.WriteString("}")
	return b.String()
}

func TestViewArgumentsShowsWhatMatters(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("x", 3000)
	contentFirst := `{"content":"` + content + `","path":"/etc/cron.d/evil"}`
	cases := []struct {
		name       string
		args       string
		flagged    []string
		first      string // path of the first line
		visible    []string
		incomplete string // substring of Incomplete; "" when complete
	}{
		{
			name: "a long value before the path leaves the path visible, cut by value",
			args: contentFirst, first: "content",
			visible: []string{`path = "/etc/cron.d/evil"`, `[2744 more bytes not shown]`},
		},
		{
			name: "a flagged path comes first and the view stays complete",
			args: contentFirst, flagged: []string{"path"}, first: "path",
			visible: []string{`* path = "/etc/cron.d/evil"`, `content = "xxx`},
		},
		{
			name: "a flagged value that must be cut makes the view incomplete",
			args: contentFirst, flagged: []string{"/content"}, first: "content",
			incomplete: "flagged argument /content is too long",
		},
		{
			name: "a flagged JSON pointer into an object is shown first",
			args: `{"a":1,"options":{"mode":"fast","url":"https://evil.example/x"}}`, flagged: []string{"/options/url"}, first: "options/url",
			visible: []string{`* options/url = "https://evil.example/x"`, `options/mode = "fast"`, `a = 1`},
		},
		{
			name: "a flagged container shows all its values flagged",
			args: `{"a":1,"options":{"mode":"fast","url":"u"}}`, flagged: []string{"options", "/options/url"}, first: "options/mode",
			visible: []string{`* options/mode = "fast"`, `* options/url = "u"`, `    a = 1`},
		},
		{
			name: "a flagged argument the call lacks is shown as absent",
			args: `{"a":1}`, flagged: []string{"path"}, first: "path",
			visible: []string{`* path = (absent)`},
		},
		{
			name: "deep nesting keeps the deepest key on its line",
			args: nested(100, `{"path":"/etc/shadow"}`), first: strings.Repeat("a/", 100) + "path",
			visible: []string{`/path = "/etc/shadow"`},
		},
		{
			name: "a path too long to show makes the view incomplete",
			args: strings.Repeat(`{"abcdefgh":`, 100) + `1` + strings.Repeat(`}`, 100), first: strings.Repeat("abcdefgh/", 100)[:MaxPathShown] + "…",
			incomplete: "key path is too long",
		},
		{
			name: "a 10 kB key before the path: the path is shown, the view incomplete",
			args: `{"` + strings.Repeat("k", 10000) + `":1,"path":"/etc/x"}`, first: strings.Repeat("k", MaxPathShown) + "…",
			visible: []string{`    path = "/etc/x"`}, incomplete: "key path is too long",
		},
		{
			name: "too many nested values hide some, never a top-level key",
			args: `{"first":{` + strings.TrimSuffix(strings.TrimPrefix(manyKeys(300, `"z":0`), "{"), "}") + `},"path":"/etc/x"}`, first: "first/k0000",
			visible: []string{`path = "/etc/x"`, `first = (`, "values not shown"}, incomplete: "not shown",
		},
		{
			name: "more top-level keys than lines: the flagged one still comes first",
			args: manyKeys(500, `"path":"/etc/x"`), flagged: []string{"path"}, first: "path",
			visible: []string{`* path = "/etc/x"`, `… = (381 more top-level keys not shown)`}, incomplete: "381 values not shown",
		},
		{
			name: "empty containers are values of their own",
			args: `{"a":{},"b":[],"c":[[]]}`, first: "a",
			visible: []string{`a = {}`, `b = []`, `c/0 = []`},
		},
		{
			name: "no arguments show as none",
			args: ``, first: "",
		},
		{
			name: "arguments that are not an object are shown raw and incomplete",
			args: `["rm","-rf","/"]`, first: "(raw)",
			incomplete: "must be a JSON object",
		},
		{
			name: "garbage after the object is shown raw and incomplete",
			args: `{"a":1} {"path":"/etc"}`, first: "(raw)",
			visible: []string{`{\"path\":\"/etc\"}`}, incomplete: "cannot be read",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := ViewArguments([]byte(tc.args), tc.flagged)
			text := v.Text()
			if tc.first == "" && len(v.Lines) != 0 {
				t.Fatalf("lines: %+v", v.Lines)
			}
			if tc.first != "" && (len(v.Lines) == 0 || v.Lines[0].Path != tc.first) {
				t.Fatalf("first line is not %q:\n%s", tc.first, text)
			}
			for _, want := range tc.visible {
				if !strings.Contains(text, want) {
					t.Errorf("view lacks %q:\n%s", want, text)
				}
			}
			if (tc.incomplete == "") != (v.Incomplete == "") || !strings.Contains(v.Incomplete, tc.incomplete) {
				t.Errorf("incomplete = %q, want %q", v.Incomplete, tc.incomplete)
			}
			if CheckArguments([]byte(tc.args)) == nil {
				if got := argumentsIncomplete([]byte(tc.args), tc.flagged); got != v.Incomplete {
					t.Errorf("the pipeline's measure says %q, the view %q", got, v.Incomplete)
				}
			}
			if sum := sha256.Sum256([]byte(tc.args)); v.Digest != hex.EncodeToString(sum[:]) || !strings.Contains(text, "sha256 "+v.Digest[:16]) {
				t.Errorf("digest %s is not the SHA-256 of the bytes as sent, or not shown:\n%s", v.Digest, text)
			}
			if len(text) > 64<<10 {
				t.Errorf("view is %d bytes", len(text))
			}
		})
	}
}

// Every top-level key has a line of its own, whatever comes before it, as
// long as there are at most MaxLinesShown of them.
func TestViewArgumentsNeverHidesATopLevelKey(t *testing.T) {
	t.Parallel()
	big := `{"blob":` + nested(3, `[`+strings.Repeat(`{"x":1},`, 400)+`1]`) + `,`
	for _, n := range []int{1, 2, 50, MaxLinesShown - 1} { // blob, n-1 keys, path
		args := big + strings.TrimPrefix(manyKeys(n-1, `"path":"/etc/x"`), "{")
		v := ViewArguments([]byte(args), nil)
		if l := lineFor(&v, "path"); l == nil || l.Value != `"/etc/x"` {
			t.Fatalf("%d keys: path not shown:\n%s", n, v.Text())
		}
		for i := 0; i < n-1; i++ {
			if lineFor(&v, fmt.Sprintf("k%04d", i)) == nil {
				t.Fatalf("%d keys: k%04d not shown:\n%s", n, i, v.Text())
			}
		}
		if lineFor(&v, "blob") == nil || v.Incomplete == "" {
			t.Fatalf("%d keys: the cut-down blob has no summary line or the view claims completeness (%q)", n, v.Incomplete)
		}
	}
}

// Text from the call cannot start a line of its own or pass for another
// value: newlines, quotes, lone surrogates and bidi controls are escaped.
func TestViewArgumentsCannotBeForged(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, args string
		want       []string
	}{
		{"a newline in a key", `{"x\nTool: read_file (server safe)\nArguments:\n    path":"/tmp/ok"}`, []string{`"x\nTool: read_file (server safe)\nArguments:\n    path" = "/tmp/ok"`}},
		{"a raw line separator in a value", "{\"a\":\"ok\u2028Why: harmless\"}", []string{`a = "ok\u2028Why: harmless"`}},
		{"a quote in a value", `{"a":"x\" = \"y"}`, []string{`a = "x\" = \"y"`}},
		{"a key that spells a path", `{"a/b":1,"a":{"b":2}}`, []string{`"a/b" = 1`, `a/b = 2`}},
		{"a key with spaces and an equals sign", `{"path = \"/tmp/ok\"":"/etc/passwd"}`, []string{`"path = \"/tmp/ok\"" = "/etc/passwd"`}},
		{"a surrogate pair is one character", `{"s":"\ud83d\ude00"}`, []string{"s = \"\U0001F600\""}},
		{"a bidi override", "{\"f\":\"txt.\u202eexe\"}", []string{`f = "txt.\u202eexe"`}},
		{"a backslash before n", `{"s":"a\\nb"}`, []string{`s = "a\\nb"`}},
		{"an escaped key that is a plain key", `{"\u0070ath":"/etc"}`, []string{`path = "/etc"`}},
		{"an empty key", `{"":1}`, []string{`"" = 1`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := ViewArguments([]byte(tc.args), nil)
			text := v.Text()
			if got := strings.Count(text, "\n"); got != len(v.Lines) {
				t.Fatalf("%d line breaks for %d lines:\n%s", got, len(v.Lines), text)
			}
			for _, want := range tc.want {
				if !strings.Contains(text, want) {
					t.Errorf("view lacks %s:\n%s", want, text)
				}
			}
			for _, l := range strings.Split(text, "\n")[1:] {
				if !strings.HasPrefix(l, "    ") && !strings.HasPrefix(l, "  * ") {
					t.Errorf("line %q does not start as a value line", l)
				}
			}
		})
	}
	// CheckArguments refuses lone surrogates, so such a call is shown raw
	// (and incomplete); the renderer keeps them apart all the same.
	a, b := ViewArguments([]byte(`{"s":"\ud800"}`), nil), ViewArguments([]byte(`{"s":"\udfff"}`), nil)
	if a.Lines[0].Value == b.Lines[0].Value || a.Digest == b.Digest {
		t.Error("two lone surrogates look the same")
	}
	for in, want := range map[string]string{`\ud800`: `\ud800`, `\udfff`: `\udfff`, `\ud800\u0041`: `\ud800A`, `\ud83d\ude00`: "\U0001F600"} {
		if got, _ := appendJSONString(nil, []byte(in), 0, len(in), 100); string(got) != want {
			t.Errorf("%s shows as %s, want %s", in, got, want)
		}
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain title":            "plain title",
		"two\nlines":             `two\nlines`,
		"tab\there":              `tab\there`,
		"bidi \u202e":            `bidi \u202e`,
		`quote " and \ back`:     `quote \" and \\ back`,
		"invalid \xff byte":      `invalid \xff byte`,
		"emoji \U0001F600 stays": "emoji \U0001F600 stays",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestArgumentPointer(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"path": "/path", "/path": "/path", "a/b": "/a~1b", "a~b": "/a~0b", "/options/url": "/options/url"} {
		if got := ArgumentPointer(in); got != want {
			t.Errorf("ArgumentPointer(%q) = %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"", "/a~2", "/a~", strings.Repeat("x", MaxFlaggedLength+1)} {
		if CheckArgumentName(bad) == nil {
			t.Errorf("CheckArgumentName(%q) accepted", bad)
		}
	}
	if got := addFlagged(nil, []string{"path", "/path", "/a~1b", "a/b", "x"}); strings.Join(got, ",") != "/path,/a~1b,/x" {
		t.Errorf("addFlagged = %v", got)
	}
}

// FuzzViewArguments: any bytes and any flags give a view without a panic,
// one line per value, and the same completeness the pipeline measures.
func FuzzViewArguments(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"b"}`, `{"content":"` + strings.Repeat("x", 300) + `","path":"/p"}`, nested(20, `{"x":[1,{"y":"\ud800"}]}`), manyKeys(130, `"z":{"q":[[],{}]}`), `[1]`, `{"a":1}x`, `{"\n":"\u2028"}`} {
		f.Add([]byte(s), "path")
	}
	f.Fuzz(func(t *testing.T, raw []byte, flag string) {
		flags := []string{flag, "/a/0", "z"}
		v := ViewArguments(raw, flags)
		text := v.Text()
		if strings.Count(text, "\n") != len(v.Lines) {
			t.Fatalf("a value spans lines:\n%s", text)
		}
		if CheckArguments(raw) != nil {
			if v.Incomplete == "" {
				t.Fatal("unreadable arguments gave a complete view")
			}
			return
		}
		if got := argumentsIncomplete(raw, flags); got != v.Incomplete {
			t.Fatalf("measure %q, view %q", got, v.Incomplete)
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(raw, &top) != nil || len(top) > MaxLinesShown-len(flags) {
			return
		}
		if v.lostTopLevel(top) {
			t.Fatalf("a top-level key has no line:\n%s", text)
		}
	})
}

// lostTopLevel reports whether a plain top-level key has no line.
func (v *ArgumentsView) lostTopLevel(top map[string]json.RawMessage) bool {
	for k := range top {
		if !plain([]byte(k)) {
			continue
		}
		found := false
		for _, l := range v.Lines {
			if l.Path == k || strings.HasPrefix(l.Path, k+"/") {
				found = true
				break
			}
		}
		if !found {
			return true
		}
	}
	return false
}
