package audit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
)

func TestConcurrentWritesStayWholeLines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	var mu sync.Mutex
	l := audit.New(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) }))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				l.Write(audit.Record{Time: time.Unix(0, 0), Event: "check", Session: strings.Repeat("s", g+1), Decision: map[string]int{"i": i}})
			}
		}(g)
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 200 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, line := range lines {
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Event != "check" {
			t.Fatalf("line %q: %v", line, err)
		}
	}
}

func TestAWriteErrorIsKeptNotFatal(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk full")
	l := audit.New(writerFunc(func(p []byte) (int, error) { return 0, boom }))
	l.Write(audit.Record{Event: "check"})
	l.Write(audit.Record{Event: "check"})
	if !errors.Is(l.Err(), boom) {
		t.Fatalf("Err() = %v", l.Err())
	}
	var nilLog *audit.Log
	nilLog.Write(audit.Record{}) // a nil log is a no-op
	if nilLog.Err() != nil {
		t.Fatal("nil log has an error")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
