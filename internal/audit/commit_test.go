package audit_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openCounted opens the log at path with a clock the test moves and a
// count of the path's stats.
func openCounted(t *testing.T, path string, rot audit.Rotation) (*audit.File, *fakeClock, *atomic.Int64) {
	t.Helper()
	f, err := audit.OpenFile(path, rot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	clock := &fakeClock{t: time.Now()}
	var stats atomic.Int64
	audit.SetClockAndStat(f, clock.now, func(p string) (fs.FileInfo, error) { stats.Add(1); return os.Stat(p) })
	return f, clock, &stats
}

func record(session string, i int) audit.Record {
	return audit.Record{Time: time.Now(), Event: "check", Session: session, Decision: map[string]any{"i": i}}
}

// A writer stats the log's path at most once per interval, however many
// records it writes, and again once the interval has passed.
func TestTheLogsPathIsStatedAtMostOncePerInterval(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, clock, stats := openCounted(t, path, audit.DefaultRotation)
	l := audit.New(f)
	for i := range 500 {
		l.Write(record("s", i))
		if i%100 == 99 {
			clock.add(audit.CheckEvery / 5)
		}
	}
	// 500 records over 4/5 of an interval since the open looked.
	if n := stats.Load(); n != 0 {
		t.Fatalf("%d stats of the path for 500 records within one interval of the open's; want 0", n)
	}
	clock.add(audit.CheckEvery / 5)
	for i := range 300 {
		l.Write(record("s", 500+i))
	}
	if n := stats.Load(); n != 1 {
		t.Fatalf("%d stats of the path for 300 records once the interval passed; want 1", n)
	}
	if got := len(readRecords(t, []string{path})); got != 800 {
		t.Fatalf("%d records in the log; want 800", got)
	}
}

// Another process rotating the log at a smaller bound than this writer's
// goes unseen until the path is next stat-ed: the records written
// meanwhile are in the rotated file, kept, not lost; the next record
// after the interval is in the new log.
func TestARecordWrittenBeforeARotationIsNoticedIsInTheKeptFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	ours, clock, _ := openCounted(t, path, audit.DefaultRotation)
	theirs, err := audit.OpenFile(path, audit.Rotation{MaxBytes: 1, Keep: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close()
	l, other := audit.New(ours), audit.New(theirs)
	l.Write(record("ours", 0))
	other.Write(record("theirs", 0)) // full at 1 byte: rotated before it is written
	l.Write(record("ours", 1))
	clock.add(audit.CheckEvery)
	l.Write(record("ours", 2))
	where := map[string]string{}
	for _, file := range logFiles(t, path) {
		for _, r := range readRecords(t, []string{file}) {
			where[fmt.Sprint(r.Session, r.Decision.(map[string]any)["i"])] = filepath.Base(file)
		}
	}
	want := map[string]string{"ours0": "audit.jsonl.1", "ours1": "audit.jsonl.1", "theirs0": "audit.jsonl", "ours2": "audit.jsonl"}
	if fmt.Sprint(where) != fmt.Sprint(want) {
		t.Errorf("records are in %v; want %v", where, want)
	}
}

// Records that arrive while a write is in flight are written together,
// with one write, in the order they arrived, and each writer returns once
// its record is written.
func TestRecordsQueuedDuringAWriteAreWrittenTogetherInOrder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := audit.OpenFile(path, audit.DefaultRotation)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entered, release := make(chan struct{}), make(chan struct{})
	var writes [][]byte
	audit.SetBeforeWrite(f, func(p []byte) {
		writes = append(writes, append([]byte(nil), p...))
		if len(writes) == 1 {
			close(entered)
			<-release
		}
	})
	l := audit.New(f)
	var wg sync.WaitGroup
	wg.Go(func() { l.Write(record("s", 0)) })
	<-entered
	const queued = 20
	returned := make(chan int, queued)
	for i := 1; i <= queued; i++ {
		before := audit.Queued(f)
		wg.Go(func() { l.Write(record("s", i)); returned <- i })
		for deadline := time.Now().Add(10 * time.Second); audit.Queued(f) == before; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) { // queued in turn, so their order is known
				close(release)
				t.Fatalf("record %d was not queued behind the write in flight", i)
			}
		}
	}
	select {
	case i := <-returned:
		t.Fatalf("record %d's writer returned before its record was written", i)
	default:
	}
	close(release)
	wg.Wait()
	if len(writes) != 2 {
		t.Fatalf("%d writes for 1 record in flight and %d queued behind it; want 2", len(writes), queued)
	}
	recs := readRecords(t, []string{path})
	if len(recs) != queued+1 || strings.Count(string(writes[1]), "\n") != queued {
		t.Fatalf("%d records in the log, %d in the second write; want %d and %d", len(recs), strings.Count(string(writes[1]), "\n"), queued+1, queued)
	}
	for i, r := range recs {
		if got := int(r.Decision.(map[string]any)["i"].(float64)); got != i {
			t.Fatalf("record %d is %d: out of order", i, got)
		}
	}
}

const helperEnv = "TOOLWARDEN_AUDIT_TEST_WRITER"

// writersRotation is the two processes' bound; Keep is enough to keep
// every file (rotation renames Keep paths, so not more).
var writersRotation = audit.Rotation{MaxBytes: 16 << 10, Keep: 400}

// writeFromGoroutines writes each records from each of goroutines sessions
// named <name>g<n>, through one File, as a process's many calls do.
func writeFromGoroutines(path string, rot audit.Rotation, name string, goroutines, each int) error {
	f, err := audit.OpenFile(path, rot)
	if err != nil {
		return err
	}
	defer f.Close()
	l := audit.New(f)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				l.Write(audit.Record{Time: time.Now(), Event: "check", Session: fmt.Sprintf("%sg%d", name, g), Decision: map[string]any{"i": i, "pad": strings.Repeat("x", 50+i%80)}})
			}
		})
	}
	wg.Wait()
	return l.Err()
}

// Not a test: the second writing process of the test below.
func TestHelperWriterProcess(t *testing.T) {
	spec := os.Getenv(helperEnv)
	if spec == "" {
		t.Skip("runs only as the helper process of TestTwoProcessesOfManyGoroutinesLoseNoRecordWhileAThirdRotates")
	}
	path, counts, _ := strings.Cut(spec, "|")
	goroutines, each, _ := strings.Cut(counts, "x")
	g, _ := strconv.Atoi(goroutines)
	n, _ := strconv.Atoi(each)
	if err := writeFromGoroutines(path, writersRotation, "child", g, n); err != nil {
		t.Fatal(err)
	}
}

// Two processes, each many goroutines on one File, append while a third
// writer rotates the log at a smaller bound than theirs, so they write
// into files rotated under them: every record is in the log or a kept file
// exactly once, whole, in its session's order.
func TestTwoProcessesOfManyGoroutinesLoseNoRecordWhileAThirdRotates(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	const goroutines, each = 8, 150
	child := exec.Command(os.Args[0], "-test.run", "^TestHelperWriterProcess$", "-test.count", "1")
	child.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%dx%d", helperEnv, path, goroutines, each))
	out := &strings.Builder{}
	child.Stdout, child.Stderr = out, out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := writeFromGoroutines(path, writersRotation, "parent", goroutines, each); err != nil {
			t.Error(err)
		}
	})
	wg.Go(func() {
		if err := writeFromGoroutines(path, audit.Rotation{MaxBytes: 2 << 10, Keep: writersRotation.Keep}, "rotator", 1, 300); err != nil {
			t.Error(err)
		}
	})
	if err := child.Wait(); err != nil {
		t.Fatalf("the second writing process: %v\n%s", err, out)
	}
	wg.Wait()
	files := logFiles(t, path)
	if len(files) < 15 {
		t.Fatalf("%d files: the log was not rotated under the writers", len(files))
	}
	next := map[string]int{}
	for _, r := range readRecords(t, files) {
		i := int(r.Decision.(map[string]any)["i"].(float64))
		if i != next[r.Session] {
			t.Fatalf("session %s: record %d after %d: lost, repeated or out of order", r.Session, i, next[r.Session]-1)
		}
		next[r.Session]++
	}
	want := map[string]int{"rotatorg0": 300}
	for g := range goroutines {
		want[fmt.Sprintf("parentg%d", g)], want[fmt.Sprintf("childg%d", g)] = each, each
	}
	if fmt.Sprint(next) != fmt.Sprint(want) {
		t.Errorf("records per session %v; want %v", next, want)
	}
}
