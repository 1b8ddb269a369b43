package rawio

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
)

// Bytes written through one wrapped end of a pipe arrive whole at the
// other, including writes larger than the pipe's buffer, from concurrent
// writers; EOF follows the writer's close.
func TestPipeRoundTrip(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	rr, ww := Wrap(r), Wrap(w)
	big := strings.Repeat("x", 1<<20) + "\n"
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if n, err := ww.Write([]byte(big)); n != len(big) || err != nil {
				t.Errorf("write: %d %v", n, err)
			}
		})
	}
	go func() { wg.Wait(); ww.Close() }()
	got, err := io.ReadAll(rr)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4*len(big) || bytes.Count(got, []byte("\n")) != 4 {
		t.Fatalf("read %d bytes", len(got))
	}
	rr.Close()
}

// A write to a pipe whose reader is gone fails (EPIPE) instead of killing
// the process, and a closed file's Read fails.
func TestBrokenPipeAndClose(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ww := Wrap(w)
	r.Close()
	if _, err := ww.Write([]byte("x\n")); err == nil {
		t.Fatal("write to a broken pipe succeeded")
	}
	ww.Close()

	r2, w2, _ := os.Pipe()
	rr := Wrap(r2)
	done := make(chan error)
	go func() {
		_, err := rr.Read(make([]byte, 10))
		done <- err
	}()
	rr.Close()
	if err := <-done; err == nil {
		t.Fatal("read after close succeeded")
	}
	w2.Close()
}
