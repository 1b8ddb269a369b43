package config

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// maxSyntaxErrors bounds the syntax errors reported for one file.
const maxSyntaxErrors = 10

// syntaxDiagnostics reports as many syntax errors of one file as can be
// found in one run. The TOML parser stops at its first error, so the line
// it names is blanked (its bytes become spaces, keeping every offset) and
// the file parsed again, until it parses or the error sits on a line that is
// already blank. A later error may only follow from an earlier one (a
// broken table header leaves its keys in the table above it), and says so.
func syntaxDiagnostics(file string, data []byte, err error) []Diagnostic {
	d := syntaxDiagnostic(file, data, err)
	out := []Diagnostic{d}
	seen := map[string]bool{d.Error(): true}
	src := bytes.Clone(data)
	for {
		skipped := d.Pos.Line
		if first, last, ok := openValue(src, d); ok {
			// The error is the first token after an array or inline table
			// that was never closed: skip the value, not that token's line,
			// which is likely a good statement of its own.
			for n := first; n <= last; n++ {
				blankLine(src, n)
			}
			skipped = first
		} else if !blankLine(src, skipped) {
			break
		}
		var raw map[string]any
		_, err := toml.Decode(string(src), &raw)
		if err == nil {
			break
		}
		d = syntaxDiagnostic(file, src, err)
		if seen[d.Error()] {
			// Blanking did not move the parser on (an unterminated string
			// runs to the end of the file whatever is in it).
			break
		}
		seen[d.Error()] = true
		if len(out) == maxSyntaxErrors {
			out = append(out, Diagnostic{Pos: d.Pos, Message: fmt.Sprintf("invalid TOML: more syntax errors follow; %d are reported at most, so fix these and check again", maxSyntaxErrors)})
			break
		}
		d.Message = fmt.Sprintf("invalid TOML (reading on past line %d; may follow from an error above): %s",
			skipped, strings.TrimPrefix(d.Message, "invalid TOML: "))
		out = append(out, d)
	}
	return out
}

// openValue finds the lines of an unclosed array or inline table that
// error d complains about ("expected a comma or array terminator" at the
// start of a later statement): from the line whose assignment opens it to
// the line before the error.
func openValue(src []byte, d Diagnostic) (first, last int, ok bool) {
	opener := ""
	switch {
	case strings.Contains(d.Message, "array terminator"):
		opener = "["
	case strings.Contains(d.Message, "inline table terminator"):
		opener = "{"
	default:
		return 0, 0, false
	}
	lines := strings.Split(string(src), "\n")
	if d.Pos.Line > len(lines) || strings.Contains(lines[d.Pos.Line-1], opener) {
		// Opened on the error's own line: that line is the statement.
		return 0, 0, false
	}
	for n := d.Pos.Line - 1; n >= 1 && n > d.Pos.Line-maxOpenValueLines; n-- {
		line := lines[n-1]
		eq := strings.IndexByte(line, '=')
		if eq < 0 {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line[eq+1:]), opener) {
			return n, d.Pos.Line - 1, true
		}
	}
	return 0, 0, false
}

// maxOpenValueLines is how far back openValue looks for the opening line.
const maxOpenValueLines = 200

// blankLine overwrites line n (1-based) of src with spaces, keeping its
// newline and a leading UTF-8 byte order mark, and reports whether there
// was anything on it to blank.
func blankLine(src []byte, n int) bool {
	start := 0
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(src[start:], '\n')
		if j < 0 {
			return false
		}
		start += j + 1
	}
	if n == 1 && bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		start = 3
	}
	end := len(src)
	if j := bytes.IndexByte(src[start:], '\n'); j >= 0 {
		end = start + j
	}
	changed := false
	for i := start; i < end; i++ {
		if src[i] != ' ' && src[i] != '\t' && src[i] != '\r' {
			src[i] = ' '
			changed = true
		}
	}
	return changed
}

// syntaxDiagnostic turns a parse failure into file:line:col plus the toml
// library's own message.
func syntaxDiagnostic(file string, data []byte, err error) Diagnostic {
	d := Diagnostic{Pos: Position{File: file, Line: 1, Col: 1}, Message: "invalid TOML: " + err.Error()}
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return d
	}
	d.Message = "invalid TOML: " + pe.Message
	// The library's Line is the lexer's line, which has already moved past
	// a newline that ends the bad token, while its Col is computed from the
	// token's start offset. Derive both from that offset so they agree.
	src := string(data)
	switch {
	case strings.HasPrefix(src, "\xef\xbb\xbf"):
		src = src[3:]
	case strings.HasPrefix(src, "\xff\xfe"), strings.HasPrefix(src, "\xfe\xff"):
		src = src[2:]
	}
	if start := pe.Position.Start; start >= 0 && start <= len(src) {
		before := src[:start]
		d.Pos.Line = 1 + strings.Count(before, "\n")
		d.Pos.Col = start - (strings.LastIndexByte(before, '\n') + 1) + 1
	} else if pe.Position.Line > 0 {
		d.Pos.Line, d.Pos.Col = pe.Position.Line, max(1, pe.Position.Col)
	}
	return d
}
