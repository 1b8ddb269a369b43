package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const goodCall = `{"server": "fs", "tool": {"name": "read_text_file", "annotations": {"readOnlyHint": true}}, "arguments": {"path": "/tmp/x"}}`

func TestCallFileErrorsSayFileLineAndColumn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		input      string
		wantStderr string
	}{
		{
			name:       "a misspelt key is an error with a suggestion, at the key",
			input:      "{\n  \"sesion\": \"a\",\n  \"server\": \"fs\"\n}",
			wantStderr: `<stdin>:2:3: call 1: unknown key "sesion" (did you mean "session"?); a call has arguments, result, server, server_context, session, tool`,
		},
		{
			name:       "an unknown key with no near spelling lists the keys",
			input:      `{"server": "fs", "colour": 1}`,
			wantStderr: `<stdin>:1:18: call 1: unknown key "colour"; a call has arguments, result, server, server_context, session, tool`,
		},
		{
			name:       "a key given twice is an error at the second",
			input:      `{"server": "fs", "server": "web"}`,
			wantStderr: `<stdin>:1:18: call 1: "server" is given twice`,
		},
		{
			name:       "bad JSON in the second call names its line",
			input:      goodCall + "\n\n{\"server\": fs}",
			wantStderr: `<stdin>:3:14: call 2: invalid JSON: invalid character 's' in literal false (expecting 'a')`,
		},
		{
			name:       "a wrong type is an error at the value",
			input:      "{\"server\": \"fs\",\n \"session\": 7}",
			wantStderr: `<stdin>:2:13: call 1: "session": cannot unmarshal number into Go value of type string`,
		},
		{
			name:       "an unknown key inside result is an error",
			input:      `{"server": "fs", "result": {"txt": "x"}}`,
			wantStderr: `<stdin>:1:28: call 1: "result": unknown field "txt"`,
		},
		{
			name:       "arguments that are not an object are an error at the value",
			input:      `{"server": "fs", "tool": {"name": "x"}, "arguments": [1]}`,
			wantStderr: `<stdin>:1:54: call 1: "arguments" must be a JSON object, got an array`,
		},
		{
			name:       "a call without a tool is an error at the call",
			input:      "\n  {\"server\": \"fs\"}",
			wantStderr: `<stdin>:2:3: call 1: no "tool" (the MCP tool definition as in tools/list)`,
		},
		{
			name:       "a value that is not an object is an error",
			input:      goodCall + " [1]",
			wantStderr: `<stdin>:1:` + strconv.Itoa(len(goodCall)+2) + `: call 2: want a JSON object, got an array`,
		},
		{
			name:       "an empty input is an error",
			input:      " \n",
			wantStderr: `<stdin>:1:1: no calls: the input is empty (want one or more JSON objects {"server", "tool", "arguments"})`,
		},
		{
			name:       "a truncated call is an error at the end",
			input:      `{"server":`,
			wantStderr: `<stdin>:1:11: call 1: invalid JSON: the input ends in the middle of a value`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(t, tt.input, "check")
			want := "toolwarden check: " + tt.wantStderr + "\n"
			if code != exitError || stdout != "" || stderr != want {
				t.Errorf("exit %d, stdout %q\nstderr %q\nwant   %q", code, stdout, stderr, want)
			}
		})
	}
}

func TestAnEmptyCallFileBesideAGoodOneIsAnError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(good, []byte(goodCall), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", "check", good, empty)
	want := "toolwarden check: " + empty + `:1:1: no calls: the input is empty (want one or more JSON objects {"server", "tool", "arguments"})` + "\n"
	if code != exitError || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestDashReadsCallsFromStdinBetweenFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "call.json")
	if err := os.WriteFile(file, []byte(goodCall), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, goodCall, "explain", file, "-", "--session", "s1")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	for _, want := range []string{file + "#1: fs/read_text_file", "\n<stdin>#1: fs/read_text_file  app=fs  session=s1"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
	code, _, stderr = runCLI(t, goodCall, "check", "-", "-")
	if code != exitError || stderr != "toolwarden check: \"-\" (stdin) is given twice\n" {
		t.Errorf("stdin twice: exit %d, stderr %q", code, stderr)
	}
}

// FuzzParseCalls: whatever the input, the call-file parser does not panic,
// and every error names a line and column inside the input.
func FuzzParseCalls(f *testing.F) {
	f.Add([]byte(goodCall))
	f.Add([]byte(goodCall + "\n" + goodCall))
	f.Add([]byte("{\n \"sesion\": 1}"))
	f.Add([]byte(`{"server": "fs", "server": "x"}`))
	f.Add([]byte(`{"result": {"text": "a", "isError": "no"}}`))
	f.Add([]byte(`[1] {"a":`))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		src := &callSource{name: "f", data: data}
		calls, err := parseCalls(src)
		if err == nil {
			for _, c := range calls {
				_, _ = c.call("s")
			}
			return
		}
		var ce *callError
		if !errors.As(err, &ce) {
			t.Fatalf("error %T without a position: %v", err, err)
		}
		var line, col int
		if _, scanErr := fmt.Sscanf(strings.TrimPrefix(ce.pos, "f:"), "%d:%d", &line, &col); scanErr != nil {
			t.Fatalf("position %q: %v", ce.pos, scanErr)
		}
		if line < 1 || line > 1+bytes.Count(data, []byte("\n")) || col < 1 {
			t.Fatalf("position %q outside the input (%d lines)", ce.pos, 1+bytes.Count(data, []byte("\n")))
		}
	})
}
