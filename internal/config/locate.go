package config

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// keyIndex maps the key paths of one TOML document to where each key is
// written. BurntSushi/toml reports positions for syntax errors only, so every
// other diagnostic gets its file:line:col from here.
//
// Paths are written as in diagnostics: keys joined by dots, quoted when not
// bare (apps.github.tools."create issue"), and array elements as [N]
// (mcp_servers.fs.env_vars[1].name). A table gets the position of its first
// mention: its header, or the first dotted key or header that implies it.
type keyIndex map[string]Position

// locateKeys indexes the keys of src. It is meant for documents that
// BurntSushi/toml has already accepted; on anything else it returns a partial
// index but never panics or loops.
func locateKeys(file string, src []byte) keyIndex {
	s := &keyScanner{
		src:    string(src),
		file:   file,
		line:   1,
		keys:   keyIndex{},
		arrays: map[string]int{},
	}
	// BurntSushi/toml drops a UTF-8 byte order mark before lexing, so its
	// columns on line 1 do not count it; neither do ours.
	if strings.HasPrefix(s.src, "\xef\xbb\xbf") {
		s.off, s.lineStart = 3, 3
	}
	s.document()
	return s.keys
}

// keyScanner is a small TOML scanner that understands just enough of the
// syntax (comments, strings, arrays, inline tables, headers, dotted keys) to
// find keys; values are skipped, not decoded.
type keyScanner struct {
	src       string
	off       int
	line      int
	lineStart int // offset of the first byte of the current line
	file      string
	keys      keyIndex
	arrays    map[string]int // [[array]] path -> elements seen so far
	depth     int
}

// maxValueDepth bounds recursion into nested arrays and inline tables;
// deeper values are skipped without being indexed.
const maxValueDepth = 128

type keySegment struct {
	name string
	pos  Position
}

func (s *keyScanner) eof() bool { return s.off >= len(s.src) }

func (s *keyScanner) peek() byte {
	if s.off >= len(s.src) {
		return 0
	}
	return s.src[s.off]
}

func (s *keyScanner) at(prefix string) bool { return strings.HasPrefix(s.src[s.off:], prefix) }

// advance moves one byte forward, keeping line and column in step. Every move
// goes through here so multi-line strings count their lines.
func (s *keyScanner) advance() {
	if s.off >= len(s.src) {
		return
	}
	if s.src[s.off] == '\n' {
		s.line++
		s.lineStart = s.off + 1
	}
	s.off++
}

func (s *keyScanner) pos() Position {
	return Position{File: s.file, Line: s.line, Col: s.off - s.lineStart + 1}
}

func (s *keyScanner) record(path string, p Position) {
	if _, ok := s.keys[path]; !ok {
		s.keys[path] = p
	}
}

// skipSpace skips blanks within a line.
func (s *keyScanner) skipSpace() {
	for c := s.peek(); c == ' ' || c == '\t'; c = s.peek() {
		s.advance()
	}
}

// skipBlank skips blanks, line ends and comments.
func (s *keyScanner) skipBlank() {
	for !s.eof() {
		switch s.peek() {
		case ' ', '\t', '\r', '\n':
			s.advance()
		case '#':
			for !s.eof() && s.peek() != '\n' {
				s.advance()
			}
		default:
			return
		}
	}
}

func (s *keyScanner) document() {
	table := ""
	for {
		s.skipBlank()
		if s.eof() {
			return
		}
		start := s.off
		if s.peek() == '[' {
			table = s.header()
		} else {
			s.keyValue(table)
		}
		if s.off == start {
			s.advance() // not TOML we understand: move on rather than loop
		}
	}
}

// header reads [table] or [[array]] and returns the path keys below it live
// under. Inside [[a]], a later [a.b] means a[last].b, so every prefix that
// names an array of tables resolves to its latest element.
func (s *keyScanner) header() string {
	s.advance()
	array := s.peek() == '['
	if array {
		s.advance()
	}
	segs := s.key()
	s.skipSpace()
	for n := 0; n < 2 && s.peek() == ']'; n++ {
		s.advance()
	}
	path := ""
	for i, seg := range segs {
		path = joinKey(path, seg.name)
		s.record(path, seg.pos)
		last := i == len(segs)-1
		switch {
		case last && array:
			n := s.arrays[path]
			s.arrays[path] = n + 1
			path = joinIndex(path, n)
			s.record(path, seg.pos)
		case !last:
			if n := s.arrays[path]; n > 0 {
				path = joinIndex(path, n-1)
			}
		}
	}
	return path
}

// keyValue reads key = value inside table.
func (s *keyScanner) keyValue(table string) {
	segs := s.key()
	if len(segs) == 0 {
		return
	}
	s.skipSpace()
	if s.peek() != '=' {
		return
	}
	s.advance()
	s.skipSpace()
	path := table
	for _, seg := range segs {
		path = joinKey(path, seg.name)
		s.record(path, seg.pos)
	}
	s.value(path)
}

// key reads a possibly dotted key: bare, "basic" or 'literal' segments.
func (s *keyScanner) key() []keySegment {
	var segs []keySegment
	for {
		s.skipSpace()
		p := s.pos()
		var name string
		switch s.peek() {
		case '"':
			name = s.basicString()
		case '\'':
			name = s.literalString()
		default:
			start := s.off
			for !s.eof() && isBareKeyByte(s.peek()) {
				s.advance()
			}
			if s.off == start {
				return segs
			}
			name = s.src[start:s.off]
		}
		segs = append(segs, keySegment{name, p})
		s.skipSpace()
		if s.peek() != '.' {
			return segs
		}
		s.advance()
	}
}

func isBareKeyByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// value skips one value, indexing the elements of arrays and the keys of
// inline tables under path.
func (s *keyScanner) value(path string) {
	if s.depth >= maxValueDepth {
		s.skipNested()
		return
	}
	s.depth++
	defer func() { s.depth-- }()
	switch {
	case s.at(`"""`):
		s.multiline(`"""`, true)
	case s.at(`'''`):
		s.multiline(`'''`, false)
	case s.peek() == '"':
		s.basicString()
	case s.peek() == '\'':
		s.literalString()
	case s.peek() == '[':
		s.array(path)
	case s.peek() == '{':
		s.inlineTable(path)
	default:
		// Numbers, booleans, dates (which may hold a space): up to the
		// next delimiter.
		for !s.eof() {
			switch s.peek() {
			case ',', ']', '}', '\n', '\r', '#':
				return
			}
			s.advance()
		}
	}
}

func (s *keyScanner) array(path string) {
	s.advance()
	for i := 0; ; i++ {
		s.skipBlank()
		if s.eof() {
			return
		}
		if s.peek() == ']' {
			s.advance()
			return
		}
		start := s.off
		elem := joinIndex(path, i)
		s.record(elem, s.pos())
		s.value(elem)
		s.skipBlank()
		switch {
		case s.peek() == ',':
			s.advance()
		case s.peek() == ']':
			s.advance()
			return
		default:
			if s.off == start {
				s.advance()
			}
			return
		}
	}
}

// inlineTable reads { k = v, ... }. TOML 1.1 (which BurntSushi/toml v1.6
// accepts) allows line breaks, comments and a trailing comma inside.
func (s *keyScanner) inlineTable(path string) {
	s.advance()
	for {
		s.skipBlank()
		if s.eof() {
			return
		}
		if s.peek() == '}' {
			s.advance()
			return
		}
		start := s.off
		s.keyValue(path)
		s.skipBlank()
		switch {
		case s.peek() == ',':
			s.advance()
		case s.peek() == '}':
			s.advance()
			return
		default:
			if s.off == start {
				s.advance()
			}
			return
		}
	}
}

// skipNested skips a value without recursion (or indexing), tracking
// brackets and strings, for documents nested deeper than maxValueDepth.
func (s *keyScanner) skipNested() {
	depth := 0
	for !s.eof() {
		switch {
		case s.at(`"""`):
			s.multiline(`"""`, true)
			continue
		case s.at(`'''`):
			s.multiline(`'''`, false)
			continue
		}
		switch s.peek() {
		case '"':
			s.basicString()
			continue
		case '\'':
			s.literalString()
			continue
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth <= 0 {
				s.advance()
				return
			}
		case ',', '\n':
			if depth <= 0 {
				return
			}
		}
		s.advance()
	}
}

// basicString reads "..." and returns its decoded text.
func (s *keyScanner) basicString() string {
	s.advance()
	var b []byte
	for !s.eof() {
		c := s.peek()
		switch c {
		case '"':
			s.advance()
			return string(b)
		case '\n':
			return string(b)
		case '\\':
			s.advance()
			b = s.escape(b)
			continue
		}
		b = append(b, c)
		s.advance()
	}
	return string(b)
}

// escape decodes one escape sequence (the backslash already read), as
// BurntSushi/toml does, including TOML 1.1's \e and \xHH.
func (s *keyScanner) escape(b []byte) []byte {
	c := s.peek()
	s.advance()
	switch c {
	case 'b':
		return append(b, '\b')
	case 't':
		return append(b, '\t')
	case 'n':
		return append(b, '\n')
	case 'f':
		return append(b, '\f')
	case 'r':
		return append(b, '\r')
	case 'e':
		return append(b, 0x1b)
	case '"', '\\':
		return append(b, c)
	case 'x', 'u', 'U':
		n := 2
		switch c {
		case 'u':
			n = 4
		case 'U':
			n = 8
		}
		if s.off+n > len(s.src) {
			return b
		}
		v, err := strconv.ParseUint(s.src[s.off:s.off+n], 16, 32)
		for range n {
			s.advance()
		}
		if err != nil || !utf8.ValidRune(rune(v)) {
			return b
		}
		return utf8.AppendRune(b, rune(v))
	}
	return b
}

// literalString reads '...' and returns its text.
func (s *keyScanner) literalString() string {
	s.advance()
	start := s.off
	for !s.eof() && s.peek() != '\'' && s.peek() != '\n' {
		s.advance()
	}
	text := s.src[start:s.off]
	if s.peek() == '\'' {
		s.advance()
	}
	return text
}

// multiline skips a """...""" or ”'...”' string. Up to two quotes may sit
// right before the closing delimiter, so the whole run of quotes closes it.
func (s *keyScanner) multiline(delim string, escapes bool) {
	for range 3 {
		s.advance()
	}
	for !s.eof() {
		if escapes && s.peek() == '\\' {
			s.advance()
			s.advance()
			continue
		}
		if s.at(delim) {
			for n := 0; n < 5 && s.peek() == delim[0]; n++ {
				s.advance()
			}
			return
		}
		s.advance()
	}
}

// joinKey appends key to a diagnostic path, quoting it when it is not bare.
func joinKey(parent, key string) string {
	k := quoteKey(key)
	if parent == "" {
		return k
	}
	return parent + "." + k
}

// joinIndex appends an array index to a diagnostic path.
func joinIndex(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}

func quoteKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isBareKeyByte(k[i]) {
			return strconv.Quote(k)
		}
	}
	return k
}

// parentPath strips the last key or index from a diagnostic path; it returns
// "" for a top-level key.
func parentPath(p string) string {
	cut := 0
	quoted := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && (c == '.' || c == '['):
			cut = i
		}
	}
	return p[:cut]
}
