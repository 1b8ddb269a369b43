package main

import (
	"strconv"
	"strings"
)

// tomlSpan is where one key's value is written in a TOML document, so init
// can rewrite [mcp_servers.X] command and args in place and leave every
// other byte (comments, layout, other keys) alone.
type tomlSpan struct {
	start, end int
	key        string // the key as written before "=" ("command", "fs.command")
	keyStart   int
	inline     bool // inside an inline table: siblings are added with ", k = v"
}

// tomlSpans maps key paths (segments joined by "\x00") to their values'
// spans. It expects a document BurntSushi/toml has accepted; on anything
// else it returns a partial map and never loops.
func tomlSpans(src string) map[string]tomlSpan {
	s := &tomlScan{src: src, spans: map[string]tomlSpan{}, arrays: map[string]int{}}
	table := ""
	for {
		s.blank()
		if s.off >= len(s.src) {
			return s.spans
		}
		start := s.off
		if s.src[s.off] == '[' {
			table = s.header()
		} else {
			s.keyValue(table, false)
		}
		if s.off == start {
			s.off++
		}
	}
}

type tomlScan struct {
	src    string
	off    int
	spans  map[string]tomlSpan
	arrays map[string]int
	depth  int
}

func (s *tomlScan) peek() byte {
	if s.off >= len(s.src) {
		return 0
	}
	return s.src[s.off]
}

func (s *tomlScan) spaces() {
	for c := s.peek(); c == ' ' || c == '\t'; c = s.peek() {
		s.off++
	}
}

// blank skips white space, line ends and comments.
func (s *tomlScan) blank() {
	for s.off < len(s.src) {
		switch s.src[s.off] {
		case ' ', '\t', '\r', '\n':
			s.off++
		case '#':
			for s.off < len(s.src) && s.src[s.off] != '\n' {
				s.off++
			}
		default:
			return
		}
	}
}

func joinPath(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "\x00" + key
}

// header reads [a.b] or [[a]]; an array of tables gets an index segment so
// its keys never collide with a plain table's.
func (s *tomlScan) header() string {
	s.off++
	array := s.peek() == '['
	if array {
		s.off++
	}
	segs := s.key()
	s.spaces()
	for n := 0; n < 2 && s.peek() == ']'; n++ {
		s.off++
	}
	path := ""
	for _, seg := range segs {
		path = joinPath(path, seg)
		if n := s.arrays[path]; n > 0 {
			path = joinPath(path, "["+strconv.Itoa(n-1)+"]")
		}
	}
	if array {
		base := path
		n := s.arrays[base]
		s.arrays[base] = n + 1
		path = joinPath(base, "["+strconv.Itoa(n)+"]")
	}
	return path
}

func (s *tomlScan) keyValue(table string, inline bool) {
	keyStart := s.off
	segs := s.key()
	if len(segs) == 0 {
		return
	}
	keyEnd := s.off
	s.spaces()
	if s.peek() != '=' {
		return
	}
	s.off++
	s.spaces()
	path := table
	for _, seg := range segs {
		path = joinPath(path, seg)
	}
	start := s.off
	s.value(path)
	s.spans[path] = tomlSpan{start: start, end: s.off, key: strings.TrimSpace(s.src[keyStart:keyEnd]), keyStart: keyStart, inline: inline}
}

func (s *tomlScan) key() []string {
	var segs []string
	for {
		s.spaces()
		switch s.peek() {
		case '"':
			segs = append(segs, s.basic())
		case '\'':
			segs = append(segs, s.literal())
		default:
			start := s.off
			for s.off < len(s.src) && isBareKeyChar(s.src[s.off]) {
				s.off++
			}
			if s.off == start {
				return segs
			}
			segs = append(segs, s.src[start:s.off])
		}
		s.spaces()
		if s.peek() != '.' {
			return segs
		}
		s.off++
	}
}

func isBareKeyChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func (s *tomlScan) value(path string) {
	if s.depth > 128 {
		return
	}
	s.depth++
	defer func() { s.depth-- }()
	switch {
	case strings.HasPrefix(s.src[s.off:], `"""`):
		s.multiline(`"""`, true)
	case strings.HasPrefix(s.src[s.off:], `'''`):
		s.multiline(`'''`, false)
	case s.peek() == '"':
		s.basic()
	case s.peek() == '\'':
		s.literal()
	case s.peek() == '[':
		s.off++
		for i := 0; ; i++ {
			s.blank()
			if s.off >= len(s.src) {
				return
			}
			if s.peek() == ']' {
				s.off++
				return
			}
			start := s.off
			s.value(joinPath(path, "["+strconv.Itoa(i)+"]"))
			s.blank()
			if s.peek() == ',' {
				s.off++
			} else if s.off == start {
				s.off++
			}
		}
	case s.peek() == '{':
		s.off++
		for {
			s.blank()
			if s.off >= len(s.src) {
				return
			}
			if s.peek() == '}' {
				s.off++
				return
			}
			start := s.off
			s.keyValue(path, true)
			s.blank()
			if s.peek() == ',' {
				s.off++
			} else if s.off == start {
				s.off++
			}
		}
	default:
		for s.off < len(s.src) {
			switch s.src[s.off] {
			case ',', ']', '}', '\n', '\r', '#':
				// trailing blanks belong to the line, not the value
				for s.off > 0 && (s.src[s.off-1] == ' ' || s.src[s.off-1] == '\t') {
					s.off--
				}
				return
			}
			s.off++
		}
	}
}

// basic reads "..." and returns its text (escapes decoded as TOML does for
// the escapes keys use in practice).
func (s *tomlScan) basic() string {
	start := s.off
	s.off++
	for s.off < len(s.src) && s.src[s.off] != '"' && s.src[s.off] != '\n' {
		if s.src[s.off] == '\\' {
			s.off++
		}
		s.off++
	}
	if s.peek() == '"' {
		s.off++
	}
	if v, err := strconv.Unquote(s.src[start:s.off]); err == nil {
		return v
	}
	return strings.Trim(s.src[start:s.off], `"`)
}

func (s *tomlScan) literal() string {
	s.off++
	start := s.off
	for s.off < len(s.src) && s.src[s.off] != '\'' && s.src[s.off] != '\n' {
		s.off++
	}
	text := s.src[start:s.off]
	if s.peek() == '\'' {
		s.off++
	}
	return text
}

func (s *tomlScan) multiline(delim string, escapes bool) {
	s.off += 3
	for s.off < len(s.src) {
		if escapes && s.src[s.off] == '\\' {
			s.off += 2
			continue
		}
		if strings.HasPrefix(s.src[s.off:], delim) {
			for n := 0; n < 5 && s.peek() == delim[0]; n++ {
				s.off++
			}
			return
		}
		s.off++
	}
}

// tomlString writes s as a TOML 1.0 basic string (Codex's parser reads 1.0).
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u` + strconv.FormatInt(int64(r)+0x10000, 16)[1:])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlStringArray writes a string array, one element per line when the
// array it replaces spanned lines.
func tomlStringArray(items []string, multiline bool, indent string) string {
	return stringArray(items, tomlString, multiline, indent, ",")
}
