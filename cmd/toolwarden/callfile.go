package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
)

// callFile is a call as check and explain read it: the MCP tool definition
// exactly as in tools/list, plus optionally the result, to run Observe
// afterwards. A file holds one or more of them, one JSON object after
// another. Every key is checked: a misspelt "sesion" would otherwise be
// dropped and the call decided in another session than the author meant.
type callFile struct {
	Session   string
	Server    string
	Tool      json.RawMessage
	Arguments json.RawMessage
	// ServerContext is what is known of the server's paths, against which
	// path rules resolve relative arguments (absent: nothing is known).
	ServerContext *host.ServerContext
	// Result, when present and the call is allowed (or approved), is
	// observed after the decision: {"text": "...", "isError": false}.
	Result *callResult
}

type callResult struct {
	Text    string `json:"text"`
	IsError bool   `json:"isError"`
}

// callKeys are the keys a call may have, each with how to read its value.
var callKeys = map[string]func(f *callFile, v json.RawMessage) error{
	"session":        func(f *callFile, v json.RawMessage) error { return strictUnmarshal(v, &f.Session) },
	"server":         func(f *callFile, v json.RawMessage) error { return strictUnmarshal(v, &f.Server) },
	"tool":           func(f *callFile, v json.RawMessage) error { f.Tool = v; return nil },
	"arguments":      func(f *callFile, v json.RawMessage) error { f.Arguments = v; return nil },
	"server_context": func(f *callFile, v json.RawMessage) error { return strictUnmarshal(v, &f.ServerContext) },
	"result":         func(f *callFile, v json.RawMessage) error { return strictUnmarshal(v, &f.Result) },
}

func callKeyNames() []string {
	names := make([]string, 0, len(callKeys))
	for k := range callKeys {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// strictUnmarshal decodes v into dst, refusing keys dst does not have.
func strictUnmarshal(v json.RawMessage, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	return nil
}

// sourcedCall is one call and where it was read: its number in the file
// (for output) and the positions of the call and of each key's value (for
// errors).
type sourcedCall struct {
	where string // "file#n", as explain titles the call
	n     int    // the call's number in its file, from 1
	file  callFile
	src   *callSource
	at    int            // offset of the call's "{"
	keyAt map[string]int // offset of each key's value
}

// callSource is one input: a file, or "-" for stdin.
type callSource struct {
	name string
	data []byte
}

// position is "file:line:col" of a byte offset, columns counted in bytes
// from 1, as config diagnostics count them.
func (s *callSource) position(off int) string {
	off = min(max(off, 0), len(s.data))
	before := s.data[:off]
	line := 1 + bytes.Count(before, []byte("\n"))
	col := off - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return fmt.Sprintf("%s:%d:%d", s.name, line, col)
}

// callError is a problem with a call file, at file:line:col.
type callError struct {
	pos string
	msg string
	err error
}

func (e *callError) Error() string { return e.pos + ": " + e.msg }
func (e *callError) Unwrap() error { return e.err }

func (s *callSource) errorf(off int, err error, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if err != nil {
		msg += ": " + jsonMessage(err)
	}
	return &callError{pos: s.position(off), msg: msg, err: err}
}

// errAt reports a problem with key's value (or the whole call, for "").
func (c *sourcedCall) errAt(key string, err error, format string, a ...any) error {
	off, ok := c.keyAt[key]
	if !ok {
		off = c.at
	}
	return c.src.errorf(off, err, "call %d: %s", c.n, fmt.Sprintf(format, a...))
}

// readCalls reads the calls of every file in order; "-" (or no file at
// all) is stdin. An empty file is an error: a call that was meant to be
// there is not.
func readCalls(e *env, files []string) ([]sourcedCall, error) {
	if len(files) == 0 {
		files = []string{"-"}
	}
	var out []sourcedCall
	stdinRead := false
	for _, name := range files {
		var data []byte
		var err error
		if name == "-" {
			if stdinRead {
				return nil, errors.New(`"-" (stdin) is given twice`)
			}
			stdinRead = true
			data, err = io.ReadAll(e.stdin)
			name = "<stdin>"
		} else {
			data, err = os.ReadFile(name)
		}
		if err != nil {
			return nil, err
		}
		calls, err := parseCalls(&callSource{name: name, data: data})
		if err != nil {
			return nil, err
		}
		out = append(out, calls...)
	}
	return out, nil
}

// parseCalls reads the JSON objects of one source, one after another.
func parseCalls(src *callSource) ([]sourcedCall, error) {
	dec := json.NewDecoder(bytes.NewReader(src.data))
	var out []sourcedCall
	for n := 1; ; n++ {
		start := skipJSONSpace(src.data, int(dec.InputOffset()))
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			if n == 1 {
				return nil, src.errorf(0, nil, "no calls: the input is empty (want one or more JSON objects {\"server\", \"tool\", \"arguments\"})")
			}
			return out, nil
		}
		if err != nil {
			return nil, src.errorf(syntaxOffset(err, len(src.data)), nil, "call %d: invalid JSON: %s", n, jsonMessage(err))
		}
		if raw[0] != '{' {
			return nil, src.errorf(start, nil, "call %d: want a JSON object, got %s", n, jsonKind(raw))
		}
		c := sourcedCall{where: fmt.Sprintf("%s#%d", src.name, n), n: n, src: src, at: start, keyAt: map[string]int{}}
		if err := c.readKeys(raw, n); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
}

// readKeys reads the object's keys one by one, to know where each is
// written: unknown and repeated keys are errors, at the key.
func (c *sourcedCall) readKeys(raw json.RawMessage, n int) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // the "{"
		return c.src.errorf(c.at, err, "call %d", n)
	}
	for dec.More() {
		keyAt := c.at + skipJSONSpace(raw, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			return c.src.errorf(keyAt, err, "call %d", n)
		}
		key, _ := tok.(string)
		valueAt := c.at + skipJSONSpace(raw, int(dec.InputOffset()))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return c.src.errorf(valueAt, err, "call %d: %q", n, key)
		}
		read, ok := callKeys[key]
		if !ok {
			hint := ""
			if s := config.Suggest(key, callKeyNames()); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", s)
			}
			return c.src.errorf(keyAt, nil, "call %d: unknown key %q%s; a call has %s", n, key, hint, strings.Join(callKeyNames(), ", "))
		}
		if _, dup := c.keyAt[key]; dup {
			return c.src.errorf(keyAt, nil, "call %d: %q is given twice", n, key)
		}
		c.keyAt[key] = valueAt
		if err := read(&c.file, v); err != nil {
			return c.src.errorf(valueAt, err, "call %d: %q", n, key)
		}
	}
	return nil
}

// call turns what was read into a host.Call, checking what JSON alone
// cannot: required keys and the shape of tool and arguments.
func (c *sourcedCall) call(defaultSession string) (host.Call, error) {
	f := &c.file
	if f.Server == "" {
		return host.Call{}, c.errAt("server", nil, `no "server" (the server's name, as in [mcp_servers.<name>] or wrap's --app)`)
	}
	if len(f.Tool) == 0 {
		return host.Call{}, c.errAt("", nil, `no "tool" (the MCP tool definition as in tools/list)`)
	}
	tool, err := host.ParseTool(f.Tool)
	if err != nil {
		return host.Call{}, c.errAt("tool", err, `"tool"`)
	}
	args := f.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	} else if args[0] != '{' {
		return host.Call{}, c.errAt("arguments", nil, `"arguments" must be a JSON object, got %s`, jsonKind(args))
	}
	s := f.Session
	if s == "" {
		s = defaultSession
	}
	return host.Call{Session: s, Server: f.Server, Tool: tool, Arguments: args, Context: f.ServerContext}, nil
}

func skipJSONSpace(b []byte, off int) int {
	for off < len(b) && (b[off] == ' ' || b[off] == '\t' || b[off] == '\n' || b[off] == '\r' || b[off] == ',' || b[off] == ':') {
		off++
	}
	return off
}

// syntaxOffset is where a JSON syntax error happened, or def when the
// error does not say.
func syntaxOffset(err error, def int) int {
	if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
		return int(se.Offset)
	}
	return def
}

// jsonMessage is a JSON error without the package's "json: " prefix.
func jsonMessage(err error) string {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "the input ends in the middle of a value"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
