package sdk_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/sdk"
)

func question(opts ...sdk.Answer) *sdk.Question {
	return &sdk.Question{Tool: "write_file", Text: "toolwarden: Allow write_file?\n\x1b[2Jpath: /a", Options: opts}
}

func TestTheTerminalReadsTheAnswerTyped(t *testing.T) {
	t.Parallel()
	all := []sdk.Answer{sdk.AllowOnce, sdk.AllowSession, sdk.Deny}
	cases := []struct {
		name  string
		typed string
		want  sdk.Answer
	}{
		{"a number picks that option", "2\n", sdk.AllowSession},
		{"a name picks that option", "once\n", sdk.AllowOnce},
		{"an empty line denies", "\n", sdk.Deny},
		{"the end of input denies", "", sdk.Deny},
		{"an answer not offered is asked again, then denied", "always\n9\nyes\n1\n", sdk.Deny},
		{"a typo is asked again", "sesion\nsession\n", sdk.AllowSession},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			term := sdk.NewTerminal(strings.NewReader(tc.typed), &out)
			got, err := term.Approve(context.Background(), question(all...))
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if !strings.Contains(out.String(), "[2] Allow for this session") {
				t.Errorf("options not shown:\n%s", out.String())
			}
		})
	}
}

func TestTheTerminalShowsEscapeSequencesInsteadOfObeyingThem(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	sdk.NewTerminal(strings.NewReader("\n"), &out).Approve(context.Background(), question(sdk.AllowOnce, sdk.Deny))
	if strings.Contains(out.String(), "\x1b") || !strings.Contains(out.String(), `\x1b[2J`) {
		t.Fatalf("escape sequence reached the terminal: %q", out.String())
	}
}

func TestAWithdrawnQuestionIsDenied(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	// Input that never comes: the question is withdrawn first.
	term := sdk.NewTerminal(blockingReader{}, &out)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, err := term.Approve(ctx, question(sdk.AllowOnce, sdk.Deny)); got != sdk.Deny || err == nil {
		t.Fatalf("withdrawn question: %q %v", got, err)
	}
}

// blockingReader never returns.
type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

func TestTheTerminalLeavesLinesTypedBetweenQuestionsToTheAgent(t *testing.T) {
	t.Parallel()
	r, w := io.Pipe()
	var out strings.Builder
	term := sdk.NewTerminal(r, &out)
	go w.Write([]byte("1\n"))
	if got, err := term.Approve(context.Background(), question(sdk.AllowOnce, sdk.Deny)); got != sdk.AllowOnce || err != nil {
		t.Fatalf("%q %v", got, err)
	}
	// The agent reads its own prompt from the same terminal: the line is
	// its, not the approver's (a reader left waiting would take it).
	go w.Write([]byte("fs read_file {}\n"))
	buf := make([]byte, 64)
	n, err := r.Read(buf)
	if err != nil || string(buf[:n]) != "fs read_file {}\n" {
		t.Fatalf("the agent read %q, %v", buf[:n], err)
	}
}
