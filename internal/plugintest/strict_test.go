package plugintest

import (
	"errors"
	"strings"
	"testing"
)

func TestCaseFileKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		// want are substrings of the error; none means the file is accepted.
		want []string
	}{
		{"a typo in expect is an error with its position and the key meant",
			`{"cases":[{"name":"x","event":"check",
  "expect":{"decison":"deny"}}]}`,
			[]string{`t.json:2:13: cases[0].expect: unknown key "decison" (did you mean "decision"?)`}},
		{"a near miss of an envelope key is an error (it would send no arguments)",
			`{"cases":[{"name":"x","event":"check","call":{"argument":{"path":"/etc"}}}]}`,
			[]string{`t.json:1:47: cases[0].call: unknown key "argument" (did you mean "arguments"?)`}},
		{"an envelope key the ABI does not define is sent, for plugins that must ignore it",
			`{"cases":[{"name":"x","event":"check","call":{"future":{"nested":[1]}}}]}`, nil},
		{"keys are matched exactly, not ignoring case as encoding/json would",
			`{"cases":[{"name":"x","event":"check","expect":{"Decision":"deny"}}]}`,
			[]string{`unknown key "Decision" (did you mean "decision"?)`}},
		{"a key given twice is an error, since only one would count",
			`{"cases":[{"name":"x","event":"check","expect":{"decision":"deny","decision":"allow"}}]}`,
			[]string{`key "decision" given twice`}},
		{"an unknown key with nothing close says so without a guess",
			`{"cases":[{"name":"x","event":"check","frobnicate":1}]}`,
			[]string{`cases[0]: unknown key "frobnicate"`}},
		{"a typo at the top level is found",
			`{"plugn":{"name":"x"},"cases":[]}`,
			[]string{`t.json:1:2: (top level): unknown key "plugn" (did you mean "plugin"?)`}},
		{"a typo inside a step is found",
			`{"cases":[{"name":"x","steps":[{"event":"check","expect":{"remeber":false}}]}]}`,
			[]string{`cases[0].steps[0].expect: unknown key "remeber" (did you mean "remember"?)`}},
		{"a typo in a tool of a list is found",
			`{"cases":[{"name":"x","event":"list","tools":[{"name":"a","hint":{}}]}]}`,
			[]string{`cases[0].tools[0]: unknown key "hint" (did you mean "hints"?)`}},
		{"an expand marker is free but its members are not",
			`{"cases":[{"name":"x","event":"check","input_text":"A","expand":{"A":{"repeat":"b","time":2}}}]}`,
			[]string{`cases[0].expand.A: unknown key "time" (did you mean "times"?)`}},
		{"every problem is listed, not only the first",
			`{"cases":[{"name":"x","event":"check","expect":{"decison":"deny","cod":"x"}}]}`,
			[]string{`"decison"`, `"cod"`}},
		{"a decision no plugin can give is an error",
			`{"cases":[{"name":"x","event":"check","expect":{"decision":"alow"}}]}`,
			[]string{`decision "alow": want allow, ask, deny or abstain`}},
		{"a case with steps gives its events in the steps",
			`{"cases":[{"name":"x","event":"check","steps":[{"event":"check"}]}]}`,
			[]string{`"event" belongs in a step`}},
		{"a step plays list, check or observe",
			`{"cases":[{"name":"x","steps":[{"event":"describe"}]}]}`,
			[]string{`a step plays list, check, observe`}},
		{"a state belongs to a scenario",
			`{"cases":[{"name":"x","event":"check","state":{"counters":{"n":1}},"expect":{"state":{}}}]}`,
			[]string{`"state" is the plugin state a scenario starts with`, `expect: "state" is checked in the steps`}},
		{"a typo in a state is found",
			`{"cases":[{"name":"x","state":{"counter":{}},"steps":[{"event":"check"}]}]}`,
			[]string{`cases[0].state: unknown key "counter" (did you mean "counters"?)`}},
		{"a case without an event is an error",
			`{"cases":[{"name":"x","expect":{}}]}`,
			[]string{`no "event"`}},
		{"a syntax error says where it is",
			"{\"cases\":[\n{\"name\":\"x\",}]}",
			[]string{`t.json:2:13: invalid character '}'`}},
		{"text after the top-level object is an error at its place",
			"{\"cases\":[]}\n  x",
			[]string{`t.json:2:3: text after the top-level object`}},
		{"config and arguments are free",
			`{"plugin":{"name":"p","config":{"anything":{"goes":1}}},"cases":[{"name":"x","event":"check","call":{"arguments":{"argument":1}},"extra":{"also":1}}]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("t.json", []byte(tt.file))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("want the file accepted, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error containing %q, the file was accepted", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestKeyErrorIsATypedError(t *testing.T) {
	t.Parallel()
	_, err := Parse("t.json", []byte(`{"cases":[{"name":"x","event":"check","expect":{"decison":"deny"}}]}`))
	var ke *KeyError
	if !errors.As(err, &ke) || ke.Key != "decison" || ke.Suggest != "decision" || ke.Line != 1 {
		t.Fatalf("want a *KeyError for decison, got %#v", err)
	}
}
