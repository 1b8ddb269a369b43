package sdk

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// Terminal is an Approver that asks on a terminal: it writes the question
// and reads the answer, one question at a time however many calls ask at
// once. Open the controlling terminal with OpenTerminal (so that an agent
// whose stdin is a pipe or a model still asks the human), or give any
// reader and writer to NewTerminal. It reads only while a question waits
// for its answer, so an agent that reads its own prompt from the same
// terminal between calls gets every line typed there.
type Terminal struct {
	in    io.Reader
	out   io.Writer
	close func() error

	mu sync.Mutex // one question at a time
	// reading says a line was asked of the reader and not yet taken (a
	// question was withdrawn while it waited): the next question takes it.
	reading bool
	want    chan struct{}
	lines   chan line
	start   sync.Once
}

type line struct {
	text string
	err  error
}

// OpenTerminal opens the controlling terminal (/dev/tty) for questions and
// answers. It fails when the process has none (a CI job, a daemon): use
// DenyAll or Fixed there.
func OpenTerminal() (*Terminal, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("opening the controlling terminal for approvals: %w (run the agent from a terminal, or use a non-interactive approver)", err)
	}
	t := NewTerminal(tty, tty)
	t.close = tty.Close
	return t, nil
}

// NewTerminal asks on out and reads answers, a line each, from in.
func NewTerminal(in io.Reader, out io.Writer) *Terminal {
	return &Terminal{in: in, out: out, want: make(chan struct{}), lines: make(chan line, 1)}
}

// Close closes the terminal OpenTerminal opened.
func (t *Terminal) Close() error {
	if t.close != nil {
		return t.close()
	}
	return nil
}

// maxTries bounds how often an unreadable answer is asked again.
const maxTries = 3

// Approve shows the question and reads the answer: the option's number, or
// its name ("once", "session", "always", "deny"). An empty line, the end
// of input, or three unreadable answers deny.
func (t *Terminal) Approve(ctx context.Context, q *Question) (Answer, error) {
	t.start.Do(func() { go t.read() })
	t.mu.Lock()
	defer t.mu.Unlock()

	var b strings.Builder
	b.WriteString("\n")
	b.WriteString(printable(q.Text))
	b.WriteString("\n")
	for i, o := range q.Options {
		fmt.Fprintf(&b, "  [%d] %s\n", i+1, o.Title())
	}
	fmt.Fprintf(&b, "Answer [1-%d, or %s; empty denies]: ", len(q.Options), optionList(q.Options))
	for try := 0; try < maxTries; try++ {
		if _, err := io.WriteString(t.out, b.String()); err != nil {
			return Deny, err
		}
		b.Reset()
		if !t.reading {
			t.want <- struct{}{}
			t.reading = true
		}
		var l line
		select {
		case <-ctx.Done():
			io.WriteString(t.out, "\n(withdrawn)\n")
			return Deny, ctx.Err()
		case l = <-t.lines:
			t.reading = false
		}
		if l.err != nil {
			if errors.Is(l.err, io.EOF) {
				return Deny, nil
			}
			return Deny, l.err
		}
		s := strings.ToLower(strings.TrimSpace(l.text))
		if s == "" {
			return Deny, nil
		}
		if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(q.Options) {
			return q.Options[n-1], nil
		}
		if a, err := ParseAnswer(s); err == nil && q.Offers(a) {
			return a, nil
		}
		fmt.Fprintf(&b, "%q is not one of the answers. Answer [1-%d]: ", s, len(q.Options))
	}
	return Deny, nil
}

// read reads one line each time a question wants one; once the input
// ended, it says so to every later question.
func (t *Terminal) read() {
	r := bufio.NewReader(t.in)
	var end error
	for range t.want {
		if end != nil {
			t.lines <- line{err: end}
			continue
		}
		s, err := r.ReadString('\n')
		if err != nil && s == "" {
			end = err
			t.lines <- line{err: err}
			continue
		}
		t.lines <- line{text: s}
	}
}

// printable keeps a question from steering the terminal: a server's tool
// name, description or argument could carry escape sequences that redraw
// the prompt. Control characters other than newline and tab are shown
// escaped.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			fmt.Fprintf(&b, "\\x%02x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
