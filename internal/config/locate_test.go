package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestLocateKeysFindsEveryKindOfKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want map[string]string // path -> "line:col"
	}{
		{
			name: "a table header names its table and every parent",
			src:  "[apps.github]\nenabled = true\n",
			want: map[string]string{"apps": "1:2", "apps.github": "1:7", "apps.github.enabled": "2:1"},
		},
		{
			name: "indented keys keep their column",
			src:  "[apps.github]\n  destructive_enable = true\n",
			want: map[string]string{"apps.github.destructive_enable": "2:3"},
		},
		{
			name: "quoted keys are unquoted and re-quoted only when not bare",
			src:  "[apps.github.tools.\"create issue\"]\napproval_mode = \"prompt\"\n[apps.github.tools.'search']\n",
			want: map[string]string{
				`apps.github.tools."create issue"`:               "1:20",
				`apps.github.tools."create issue".approval_mode`: "2:1",
				`apps.github.tools.search`:                       "3:20",
			},
		},
		{
			name: "whitespace around header dots is allowed",
			src:  "[ apps . \"x\" ]\nenabled = true\n",
			want: map[string]string{"apps": "1:3", "apps.x": "1:10", "apps.x.enabled": "2:1"},
		},
		{
			name: "dotted keys name each segment where it is written",
			src:  "apps.github.enabled = false\n[mcp_servers]\nfs.command = \"npx\"\n",
			want: map[string]string{
				"apps": "1:1", "apps.github": "1:6", "apps.github.enabled": "1:13",
				"mcp_servers.fs": "3:1", "mcp_servers.fs.command": "3:4",
			},
		},
		{
			name: "inline tables index their keys, nested ones too",
			src:  "approval_policy = { granular = { sandbox_approval = true, rules = false } }\n",
			want: map[string]string{
				"approval_policy":                           "1:1",
				"approval_policy.granular":                  "1:21",
				"approval_policy.granular.sandbox_approval": "1:34",
				"approval_policy.granular.rules":            "1:59",
			},
		},
		{
			name: "array elements are indexed, inline tables inside them too",
			src:  "env_vars = [\"HOME\", { name = \"TOKEN\", source = \"local\" }]\n",
			want: map[string]string{
				"env_vars[0]": "1:13", "env_vars[1]": "1:21",
				"env_vars[1].name": "1:23", "env_vars[1].source": "1:39",
			},
		},
		{
			name: "multi-line arrays with comments and a trailing comma",
			src:  "args = [\n  \"-y\", # flag\n  # whole-line comment\n  \"pkg\",\n]\nnext = 1\n",
			want: map[string]string{"args[0]": "2:3", "args[1]": "4:3", "next": "6:1"},
		},
		{
			name: "arrays of tables count their elements and nest",
			src:  "[[a]]\nx = 1\n[[a]]\nx = 2\n[a.b]\ny = 3\n[[a.c]]\nz = 4\n",
			want: map[string]string{
				"a": "1:3", "a[0]": "1:3", "a[0].x": "2:1", "a[1]": "3:3", "a[1].x": "4:1",
				"a[1].b": "5:4", "a[1].b.y": "6:1", "a[1].c[0]": "7:5", "a[1].c[0].z": "8:1",
			},
		},
		{
			name: "multi-line strings do not hide keys or shift lines",
			src:  "a = \"\"\"\nline [x]\nb = 1\n\"\"\"\nc = '''\n'quoted' ''\n'''\nd = 1\n",
			want: map[string]string{"a": "1:1", "c": "5:1", "d": "8:1"},
		},
		{
			name: "strings holding delimiters do not end values early",
			src:  "a = \"x]}#,\\\"\"\nb = 'y\"'\nc = [\"]\", '[']\nd = 1\n",
			want: map[string]string{"a": "1:1", "b": "2:1", "c[1]": "3:11", "d": "4:1"},
		},
		{
			name: "escapes in quoted keys decode as TOML does",
			src:  "\"a\\u00e9\\tb\" = 1\n\"\\x41\\e\" = 2\n",
			want: map[string]string{`"aé\tb"`: "1:1", `"A\x1b"`: "2:1"},
		},
		{
			name: "every escape TOML has decodes in a quoted key",
			src:  "\"\\b\\t\\n\\f\\r\\e\\\"\\\\\\x41\\u00e9\\U0001F600\" = 1\nz = 1\n",
			want: map[string]string{quote("\b\t\n\f\r\x1b\"\\Aé😀"): "1:1", "z": "2:1"},
		},
		{
			name: "dates with a space and numbers end at the line",
			src:  "when = 1979-05-27 07:32:00Z # comment\nn = -1_000.5e3\nafter = true\n",
			want: map[string]string{"when": "1:1", "n": "2:1", "after": "3:1"},
		},
		{
			name: "TOML 1.1 inline tables may span lines",
			src:  "t = {\n  a = 1, # one\n  b = { c = 2 },\n}\nz = 0\n",
			want: map[string]string{"t.a": "2:3", "t.b.c": "3:9", "z": "5:1"},
		},
		{
			name: "a byte order mark is not counted, as in BurntSushi/toml",
			src:  "\xef\xbb\xbfa = 1\n",
			want: map[string]string{"a": "1:1"},
		},
		{
			name: "CRLF line ends count as one line each",
			src:  "a = 1\r\n\r\nb = [\r\n 2,\r\n]\r\n",
			want: map[string]string{"a": "1:1", "b": "3:1", "b[0]": "4:2"},
		},
		{
			name: "a table keeps the position of its first mention",
			src:  "[apps.x.tools.t]\nenabled = true\n[apps.x]\nenabled = true\n",
			want: map[string]string{"apps.x": "1:7", "apps.x.enabled": "4:1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var raw map[string]any
			if _, err := toml.Decode(tt.src, &raw); err != nil {
				t.Fatalf("test source is not TOML: %v", err)
			}
			keys := locateKeys("f.toml", []byte(tt.src))
			for path, want := range tt.want {
				p, ok := keys[path]
				if !ok {
					t.Errorf("%s: not found; have %v", path, keys)
					continue
				}
				if got := fmt.Sprintf("%d:%d", p.Line, p.Col); got != want || p.File != "f.toml" {
					t.Errorf("%s: at %s:%s, want f.toml:%s", path, p.File, got, want)
				}
			}
			if missing := unlocated(raw, keys); len(missing) > 0 {
				t.Errorf("decoded keys without a position: %v", missing)
			}
		})
	}
}

func TestLocateKeysSurvivesDeepNesting(t *testing.T) {
	t.Parallel()
	depth := maxValueDepth + 50
	src := "a = " + strings.Repeat("[", depth) + `"]", '[', """x]""", {k = 1}` + strings.Repeat("]", depth) +
		"\nb = { c = " + strings.Repeat("{d = ", depth) + "1" + strings.Repeat("}", depth) + " }\nz = 1\n"
	var raw map[string]any
	if _, err := toml.Decode(src, &raw); err != nil {
		t.Fatalf("test source is not TOML: %v", err)
	}
	keys := locateKeys("f.toml", []byte(src))
	for path, want := range map[string]Position{"a": {"f.toml", 1, 1}, "b.c": {"f.toml", 2, 7}, "z": {"f.toml", 3, 1}} {
		if got := keys[path]; got != want {
			t.Errorf("%s at %v, want %v", path, got, want)
		}
	}
}

// TestLocateKeysCoversEveryKeyOfTheTestdata checks the locator against the
// decoder on every sample we ship: each key BurntSushi/toml decodes must
// have a position.
func TestLocateKeysCoversEveryKeyOfTheTestdata(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/*.toml")
	bad, _ := filepath.Glob("testdata/bad/*.toml")
	files = append(append(files, bad...), "default.toml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		if _, err := toml.Decode(string(data), &raw); err != nil {
			continue // the syntax-error sample
		}
		if missing := unlocated(raw, locateKeys(file, data)); len(missing) > 0 {
			t.Errorf("%s: keys without a position: %v", file, missing)
		}
	}
}

// unlocated walks a decoded document and lists the paths the index lacks.
func unlocated(raw map[string]any, keys keyIndex) []string {
	var missing []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		if path != "" {
			if _, ok := keys[path]; !ok {
				missing = append(missing, path)
			}
		}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(joinKey(path, k), e)
			}
		default:
			if arr, ok := asArray(v); ok {
				for i, e := range arr {
					walk(joinIndex(path, i), e)
				}
			}
		}
	}
	walk("", raw)
	return missing
}

func TestParentPathStripsOneSegment(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"apps":                            "",
		"apps.github":                     "apps",
		`apps.github.tools."a.b"`:         "apps.github.tools",
		`apps.github.tools."a.b".enabled`: `apps.github.tools."a.b"`,
		`x."a\"b.c"`:                      "x",
		"mcp.fs.env_vars[1]":              "mcp.fs.env_vars",
		"mcp.fs.env_vars[1].name":         "mcp.fs.env_vars[1]",
		`"[0]"`:                           "",
	}
	for in, want := range tests {
		if got := parentPath(in); got != want {
			t.Errorf("parentPath(%s) = %q, want %q", in, got, want)
		}
	}
}
