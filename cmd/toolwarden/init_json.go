package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// jsonNode is one value of a JSON document with its byte span, so init can
// replace a value in place and leave every other byte of an agent's file as
// it was (key order, spacing, other keys).
type jsonNode struct {
	kind       byte // '{', '[', '"' or 'v' (number, true, false, null)
	start, end int
	str        string // a string's decoded text
	members    []jsonMember
	elems      []*jsonNode
}

type jsonMember struct {
	key string
	val *jsonNode
}

// get returns an object's member by key (the last one, as JSON.parse does).
func (n *jsonNode) get(key string) *jsonNode {
	if n == nil || n.kind != '{' {
		return nil
	}
	var v *jsonNode
	for _, m := range n.members {
		if m.key == key {
			v = m.val
		}
	}
	return v
}

// value decodes the node into Go values, for comparing documents.
func (n *jsonNode) value(src []byte) any {
	switch n.kind {
	case '{':
		m := make(map[string]any, len(n.members))
		for _, mem := range n.members {
			m[mem.key] = mem.val.value(src)
		}
		return m
	case '[':
		a := make([]any, len(n.elems))
		for i, e := range n.elems {
			a[i] = e.value(src)
		}
		return a
	case '"':
		return n.str
	}
	return string(src[n.start:n.end])
}

// jsonError is a syntax error at a byte offset of a named file.
type jsonError struct {
	file string
	src  []byte
	off  int
	msg  string
}

func (e *jsonError) Error() string {
	line, col := lineCol(e.src, e.off)
	return fmt.Sprintf("%s:%d:%d: %s (the file was not changed; fix it, or remove it, and run init again)", e.file, line, col, e.msg)
}

// lineCol turns a byte offset into a 1-based line and column (in bytes).
func lineCol(src []byte, off int) (int, int) {
	if off > len(src) {
		off = len(src)
	}
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, off - start + 1
}

// maxJSONDepth bounds nesting so a hostile file cannot exhaust the stack.
const maxJSONDepth = 256

type jsonParser struct {
	file     string
	src      []byte
	off      int
	comments bool // Gemini CLI's settings.json may hold // and /* */ comments
	depth    int
}

// parseJSON parses a whole document, reporting the first error with its
// file:line:col.
func parseJSON(file string, src []byte, comments bool) (*jsonNode, error) {
	p := &jsonParser{file: file, src: src, comments: comments}
	if len(src) >= 3 && string(src[:3]) == "\xef\xbb\xbf" {
		p.off = 3
	}
	n, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.off < len(src) {
		return nil, p.errorf("unexpected %q after the document", src[p.off])
	}
	return n, nil
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return &jsonError{file: p.file, src: p.src, off: p.off, msg: fmt.Sprintf(format, args...)}
}

func (p *jsonParser) space() error {
	for p.off < len(p.src) {
		switch c := p.src[p.off]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.off++
		case c == '/' && p.comments && p.off+1 < len(p.src) && p.src[p.off+1] == '/':
			for p.off < len(p.src) && p.src[p.off] != '\n' {
				p.off++
			}
		case c == '/' && p.comments && p.off+1 < len(p.src) && p.src[p.off+1] == '*':
			end := strings.Index(string(p.src[p.off+2:]), "*/")
			if end < 0 {
				return p.errorf("unterminated /* comment")
			}
			p.off += end + 4
		default:
			return nil
		}
	}
	return nil
}

func (p *jsonParser) value() (*jsonNode, error) {
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.off >= len(p.src) {
		return nil, p.errorf("unexpected end of file")
	}
	switch c := p.src[p.off]; {
	case c == '{' || c == '[':
		if p.depth >= maxJSONDepth {
			return nil, p.errorf("nested deeper than %d levels", maxJSONDepth)
		}
		p.depth++
		defer func() { p.depth-- }()
		if c == '{' {
			return p.object()
		}
		return p.array()
	case c == '"':
		return p.string()
	default:
		start := p.off
		for p.off < len(p.src) && strings.IndexByte("+-.0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", p.src[p.off]) >= 0 {
			p.off++
		}
		tok := p.src[start:p.off]
		if len(tok) == 0 || !json.Valid(tok) {
			p.off = start
			return nil, p.errorf("invalid value starting with %q", c)
		}
		return &jsonNode{kind: 'v', start: start, end: p.off}, nil
	}
}

func (p *jsonParser) string() (*jsonNode, error) {
	start := p.off
	p.off++
	for p.off < len(p.src) {
		switch c := p.src[p.off]; {
		case c == '\\':
			p.off += 2
		case c == '"':
			p.off++
			n := &jsonNode{kind: '"', start: start, end: p.off}
			if err := json.Unmarshal(p.src[start:p.off], &n.str); err != nil {
				p.off = start
				return nil, p.errorf("invalid string: %v", err)
			}
			return n, nil
		case c < 0x20:
			return nil, p.errorf("control character in string")
		default:
			p.off++
		}
	}
	p.off = start
	return nil, p.errorf("unterminated string")
}

func (p *jsonParser) object() (*jsonNode, error) {
	n := &jsonNode{kind: '{', start: p.off}
	p.off++
	for first := true; ; first = false {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.off < len(p.src) && p.src[p.off] == '}' && first {
			p.off++
			n.end = p.off
			return n, nil
		}
		if p.off >= len(p.src) || p.src[p.off] != '"' {
			return nil, p.errorf("expected a \"key\" in object")
		}
		k, err := p.string()
		if err != nil {
			return nil, err
		}
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.off >= len(p.src) || p.src[p.off] != ':' {
			return nil, p.errorf("expected ':' after key %q", k.str)
		}
		p.off++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.members = append(n.members, jsonMember{key: k.str, val: v})
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.off < len(p.src) && p.src[p.off] == ',' {
			p.off++
			continue
		}
		if p.off < len(p.src) && p.src[p.off] == '}' {
			p.off++
			n.end = p.off
			return n, nil
		}
		return nil, p.errorf("expected ',' or '}' in object")
	}
}

func (p *jsonParser) array() (*jsonNode, error) {
	n := &jsonNode{kind: '[', start: p.off}
	p.off++
	for first := true; ; first = false {
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.off < len(p.src) && p.src[p.off] == ']' && first {
			p.off++
			n.end = p.off
			return n, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, v)
		if err := p.space(); err != nil {
			return nil, err
		}
		if p.off < len(p.src) && p.src[p.off] == ',' {
			p.off++
			continue
		}
		if p.off < len(p.src) && p.src[p.off] == ']' {
			p.off++
			n.end = p.off
			return n, nil
		}
		return nil, p.errorf("expected ',' or ']' in array")
	}
}

// jsonString encodes s as JSON without HTML escaping, so paths and
// arguments read as written.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// jsonStringArray writes a string array; when the array it replaces spanned
// lines, one element per line at that array's indentation.
func jsonStringArray(items []string, multiline bool, indent string) string {
	return stringArray(items, jsonString, multiline, indent, "")
}

// stringArray writes items as an array with each quoted by quote: on one
// line, or one element per line at indent when the array it replaces
// spanned lines, the last followed by trail (TOML takes a trailing comma,
// JSON does not). An empty array is [] either way.
func stringArray(items []string, quote func(string) string, multiline bool, indent, trail string) string {
	if len(items) == 0 {
		return "[]"
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range items {
		if i > 0 {
			b.WriteByte(',')
			if !multiline {
				b.WriteByte(' ')
			}
		}
		if multiline {
			b.WriteString("\n" + indent + "  ")
		}
		b.WriteString(quote(s))
	}
	if multiline {
		b.WriteString(trail + "\n" + indent)
	}
	b.WriteByte(']')
	return b.String()
}

// indentAt is the leading white space of the line holding offset off.
func indentAt(src []byte, off int) string {
	start := off
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}
