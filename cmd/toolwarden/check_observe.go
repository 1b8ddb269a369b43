package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/toolwarden/toolwarden/host"
)

// observeResultFlag is check's and explain's --observe-result: a result
// every allowed call without its own "result" is observed with, so that a
// session (labels that observe adds, then the checks that read them) can be
// replayed from the command line. Without it, and without a "result" in
// the call, check and explain send no observe event.
type observeResultFlag struct {
	text string
	set  bool
}

func (f *observeResultFlag) String() string { return f.text }

// Set takes the result's text, or @FILE for a file's contents (@@ for a
// text that starts with @).
func (f *observeResultFlag) Set(v string) error {
	switch {
	case strings.HasPrefix(v, "@@"):
		v = v[1:]
	case strings.HasPrefix(v, "@"):
		b, err := os.ReadFile(v[1:])
		if err != nil {
			return fmt.Errorf("result file: %w", err)
		}
		v = string(b)
	}
	f.text, f.set = v, true
	return nil
}

const observeResultUsage = "observe every allowed call that has no \"result\" of its own as if the tool returned `TEXT` (@FILE: the file's contents)"

// resultFor is the result a call is observed with: its own, else the
// flag's; ok is false when there is none (no observe event).
func (f *observeResultFlag) resultFor(c *callFile) (r host.Result, ok bool) {
	if c.Result != nil {
		return host.Result{Text: c.Result.Text, IsError: c.Result.IsError}, true
	}
	if f.set {
		return host.Result{Text: f.text}, true
	}
	return host.Result{}, false
}
