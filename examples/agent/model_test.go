package main

import (
	"strings"
	"testing"
)

func TestPlansReadAsArraysOrLines(t *testing.T) {
	cases := []struct {
		name, plan string
		calls      int
		err        string
	}{
		{"a JSON array of calls", `[{"server":"fs","tool":"read_file","arguments":{"path":"/a"}},{"server":"fs","tool":"list_directory"}]`, 2, ""},
		{"JSON Lines with comments and blank lines", "# setup\n{\"server\":\"fs\",\"tool\":\"read_file\"}\n\n{\"conversation\":\"b\",\"server\":\"fs\",\"tool\":\"write_file\"}\n", 2, ""},
		{"a line that is not JSON names its line", "{\"server\":\"fs\",\"tool\":\"a\"}\nnot json\n", 0, "line 2"},
		{"a call without a tool is refused", `[{"server":"fs"}]`, 0, "call 1: server and tool are required"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := parsePlan([]byte(tc.plan))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(calls) != tc.calls {
				t.Fatalf("%d calls, %v", len(calls), err)
			}
		})
	}
}

func TestTypedCallsNameServerToolArgumentsAndConversation(t *testing.T) {
	c, err := parseTyped(`@review fs write_file {"path":"/a","content":"x y"}`)
	if err != nil || c.Conversation != "review" || c.Server != "fs" || c.Tool != "write_file" || string(c.Arguments) != `{"path":"/a","content":"x y"}` {
		t.Fatalf("%+v %v", c, err)
	}
	if _, err := parseTyped(`fs write_file {bad`); err == nil {
		t.Fatal("bad JSON accepted")
	}
	if _, err := parseTyped(`fs`); err == nil {
		t.Fatal("a call without a tool accepted")
	}
}
