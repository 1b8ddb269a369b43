package audit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
)

// logFiles returns the log at path and its rotated files, oldest first,
// and fails when a rotated file is missing between two that exist.
func logFiles(t *testing.T, path string) []string {
	t.Helper()
	var rotated []string
	for i := 1; ; i++ {
		if _, err := os.Stat(audit.Rotated(path, i)); err != nil {
			break
		}
		rotated = append([]string{audit.Rotated(path, i)}, rotated...)
	}
	return append(rotated, path)
}

// readRecords reads every line of files as a record, failing on a line
// that is not one whole record.
func readRecords(t *testing.T, files []string) []audit.Record {
	t.Helper()
	var out []audit.Record
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line := range bytes.Lines(b) {
			var r audit.Record
			if err := json.Unmarshal(line, &r); err != nil || !bytes.HasSuffix(line, []byte("\n")) {
				t.Fatalf("%s: a line that is not one whole record (%v): %q", f, err, line)
			}
			out = append(out, r)
		}
	}
	return out
}

// Writers with their own handles (as separate processes have) append at
// once while the log rotates every few kilobytes: every record is in
// exactly one file, whole, in its writer's order; every rotated file had
// reached the bound (a file rotated twice would be a small one); none
// holds much more than the bound.
func TestConcurrentWritersRotateWithoutLosingOrSplittingARecord(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	rot := audit.Rotation{MaxBytes: 4 << 10, Keep: 100}
	const writers, each = 8, 150
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := audit.OpenFile(path, rot)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			l := audit.New(f)
			for i := range each {
				l.Write(audit.Record{Time: time.Now(), Event: "check", Session: fmt.Sprintf("w%d", w), Decision: map[string]any{"i": i, "pad": strings.Repeat("x", 100+i%50)}})
			}
			if err := l.Err(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	files := logFiles(t, path)
	if len(files) < 10 {
		t.Fatalf("%d files: the log was not rotated as often as its size asks", len(files))
	}
	next := map[string]int{}
	for _, r := range readRecords(t, files) {
		i := int(r.Decision.(map[string]any)["i"].(float64))
		if i != next[r.Session] {
			t.Fatalf("writer %s: record %d after %d: lost, repeated or out of order", r.Session, i, next[r.Session]-1)
		}
		next[r.Session]++
	}
	for w := range writers {
		if n := next[fmt.Sprintf("w%d", w)]; n != each {
			t.Errorf("writer w%d: %d of %d records in the log", w, n, each)
		}
	}
	for _, f := range files[:len(files)-1] {
		fi, _ := os.Stat(f)
		if fi.Size() < rot.MaxBytes || fi.Size() > rot.MaxBytes+1024 {
			t.Errorf("%s holds %d bytes; a rotated file holds from %d to one record more", f, fi.Size(), rot.MaxBytes)
		}
	}
}

// Rotation keeps Keep old files, removing only the oldest; the newest
// records are in the log itself.
func TestRotationKeepsTheNewestFilesOnly(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := audit.OpenFile(path, audit.Rotation{MaxBytes: 1 << 10, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	l := audit.New(f)
	for i := range 100 {
		l.Write(audit.Record{Time: time.Now(), Event: "check", Session: "s", Decision: map[string]int{"i": i}})
	}
	f.Close()
	files := logFiles(t, path)
	if len(files) != 3 {
		t.Fatalf("files %v; want the log and two rotated", files)
	}
	recs := readRecords(t, files)
	if last := recs[len(recs)-1].Decision.(map[string]any)["i"]; last != float64(99) {
		t.Errorf("the newest record is %v; want 99", last)
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].Decision.(map[string]any)["i"].(float64) != recs[i-1].Decision.(map[string]any)["i"].(float64)+1 {
			t.Fatalf("records kept are not one unbroken run: %v after %v", recs[i].Decision, recs[i-1].Decision)
		}
	}
}

// A log whose last line lost its end (a truncated copy, a hand edit) is
// kept as it is, and the next record starts a line of its own instead of
// being glued to the torn one and lost with it.
func TestARecordAfterATornLineIsALineOfItsOwn(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	torn := `{"time":"2026-01-01T00:00:00Z","event":"check","decis`
	if err := os.WriteFile(path, []byte(torn), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := audit.OpenFile(path, audit.DefaultRotation)
	if err != nil {
		t.Fatal(err)
	}
	audit.New(f).Write(audit.Record{Time: time.Now(), Event: "check", Session: "after"})
	f.Close()
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 2 || lines[0] != torn {
		t.Fatalf("the log holds %q; want the torn line kept, then the record", b)
	}
	var r audit.Record
	if err := json.Unmarshal([]byte(lines[1]), &r); err != nil || r.Session != "after" {
		t.Errorf("the record after the torn line: %q (%v)", lines[1], err)
	}
}

// A log removed by hand while a writer has it open is started again at
// its path, not written into the removed file.
func TestALogRemovedWhileOpenIsStartedAgain(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := audit.OpenFile(path, audit.DefaultRotation)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := audit.New(f)
	l.Write(audit.Record{Time: time.Now(), Event: "check", Session: "before"})
	os.Remove(path)
	l.Write(audit.Record{Time: time.Now(), Event: "check", Session: "after"})
	recs := readRecords(t, []string{path})
	if len(recs) != 1 || recs[0].Session != "after" {
		t.Errorf("the log at its path holds %+v; want the record written after the removal", recs)
	}
}
