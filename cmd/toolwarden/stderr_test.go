package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
)

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
