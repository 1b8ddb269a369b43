package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// runCLI runs one command in-process, as toolwarden does after handing it
// over, and returns its exit status, stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(&env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, args)
	return code, out.String(), errb.String()
}

// Run by hand, toolwarden-mcp names its commands and points at toolwarden.
func TestRunByItselfItPointsAtToolwarden(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"no command is bad usage", nil, exitUsage},
		{"an unknown command is bad usage", []string{"hook"}, exitUsage},
		{"help is not an error", []string{"--help"}, exitOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", c.args...)
			out := stderr
			if c.code == exitOK {
				out = stdout
			}
			if code != c.code || !strings.Contains(out, "run it as toolwarden <command>") || !strings.Contains(out, "toolwarden wrap ") {
				t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
		})
	}
}

// Lines written to a command's stderr from several goroutines at once (a
// server's stderr reader, an upstream client's log, the command itself)
// arrive whole, never one inside another; under -race, a writer without
// the lock is also reported as a race on the buffer.
func TestStderrTakesOneWriteAtATime(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &buf, getenv: func(string) string { return "" }}
	run(e, []string{"--help"}) // run makes e.stderr the locked writer
	buf.Reset()
	const writers, lines = 8, 200
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range lines {
				fmt.Fprintf(e.stderr, "writer %d line %d %s\n", g, i, strings.Repeat("x", 64))
			}
		})
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(got) != writers*lines {
		t.Fatalf("%d lines, want %d", len(got), writers*lines)
	}
	for _, l := range got {
		var g, i int
		var x string
		if n, _ := fmt.Sscanf(l, "writer %d line %d %s", &g, &i, &x); n != 3 || x != strings.Repeat("x", 64) {
			t.Fatalf("a line was split by another: %q", l)
		}
	}
}
