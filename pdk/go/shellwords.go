package pdk

import "fmt"

// SplitWords splits a command line into words as POSIX sh splits a simple
// command, without expanding anything, so a policy can judge a `command`
// argument by its words rather than by substrings:
//
//   - words are separated by unquoted spaces and tabs;
//   - '...' keeps everything up to the next ' as is;
//   - "..." keeps everything up to the next unescaped ", where a backslash
//     escapes only $ ` " \ and newline (and is otherwise kept);
//   - an unquoted backslash escapes the next byte;
//   - backslash-newline is removed (a line continuation), quoted or not;
//   - an unquoted # at the start of a word starts a comment to the line's end;
//   - $, `, ~, * and the like are kept as written: nothing is expanded.
//
// It refuses what is not one simple command, because sh would not run
// these words as one command: an unquoted | & ; < > ( ) (pipes, lists,
// redirections, subshells, $(...)), and a newline followed by anything but
// blanks. It also refuses an unterminated quote and a trailing backslash.
// The kits for Rust, C and AssemblyScript split the same way; the shared
// vectors are pdk/testdata/shellwords.json.
func SplitWords(line string) ([]string, error) {
	words := []string{}
	var cur []byte
	inWord := false
	end := func() {
		if inWord {
			words = append(words, string(cur))
			cur, inWord = cur[:0:0], false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			end()
		case c == '\n':
			end()
			if !blankFrom(line, i+1) {
				return nil, fmt.Errorf("shell words: newline at byte %d: the line holds more than one command", i)
			}
			return words, nil
		case c == '#' && !inWord:
			for i+1 < len(line) && line[i+1] != '\n' {
				i++
			}
		case isOperator(c):
			return nil, fmt.Errorf("shell words: unquoted %q at byte %d: the line is not a simple command (quote it to mean the character)", c, i)
		case c == '\\':
			if i+1 == len(line) {
				return nil, fmt.Errorf("shell words: trailing backslash at byte %d", i)
			}
			i++
			if line[i] != '\n' {
				cur = append(cur, line[i])
				inWord = true
			}
		case c == '\'':
			j := i + 1
			for j < len(line) && line[j] != '\'' {
				j++
			}
			if j == len(line) {
				return nil, fmt.Errorf("shell words: unterminated single quote at byte %d", i)
			}
			cur = append(cur, line[i+1:j]...)
			inWord = true
			i = j
		case c == '"':
			var err error
			if cur, i, err = doubleQuoted(line, i, cur); err != nil {
				return nil, err
			}
			inWord = true
		default:
			cur = append(cur, c)
			inWord = true
		}
	}
	end()
	return words, nil
}

// blankFrom reports whether line holds only blanks and newlines from i on.
func blankFrom(line string, i int) bool {
	for ; i < len(line); i++ {
		if d := line[i]; d != ' ' && d != '\t' && d != '\n' {
			return false
		}
	}
	return true
}

// isOperator reports whether c, unquoted, makes a line more than one
// simple command: a pipe, a list, a redirection or a subshell.
func isOperator(c byte) bool {
	switch c {
	case '|', '&', ';', '<', '>', '(', ')':
		return true
	}
	return false
}

// doubleQuoted appends to cur the text of the double-quoted string that
// opens at line[start], with sh's backslash rules inside double quotes, and
// returns the index of its closing quote.
func doubleQuoted(line string, start int, cur []byte) ([]byte, int, error) {
	for i := start + 1; ; i++ {
		if i == len(line) {
			return nil, 0, fmt.Errorf("shell words: unterminated double quote at byte %d", start)
		}
		d := line[i]
		if d == '"' {
			return cur, i, nil
		}
		if d == '\\' && i+1 < len(line) {
			switch line[i+1] {
			case '$', '`', '"', '\\':
				i++
				d = line[i]
			case '\n':
				i++
				continue
			}
		}
		cur = append(cur, d)
	}
}
