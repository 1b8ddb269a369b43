package audit_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
)

// BenchmarkWrite writes serve-sized records into one audit log from as many
// goroutines as calls in flight (-cpu sets GOMAXPROCS; SetParallelism 50
// puts 50 writers a proc).
func BenchmarkWrite(b *testing.B) {
	f, err := audit.OpenFile(filepath.Join(b.TempDir(), "audit.jsonl"), audit.DefaultRotation)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	l := audit.New(f)
	r := audit.Record{Time: time.Now(), Event: "check", Session: "0123456789abcdef", Decision: map[string]any{"tool": "everything__echo", "verdict": "allow", "reasons": []string{"read-only"}, "digest": "sha256:0123456789abcdef0123456789abcdef"}}
	b.SetParallelism(50)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Write(r)
		}
	})
	if err := l.Err(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkWriteOneWriter is the same with one writer: nothing to batch.
func BenchmarkWriteOneWriter(b *testing.B) {
	f, err := audit.OpenFile(filepath.Join(b.TempDir(), "audit.jsonl"), audit.DefaultRotation)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	l := audit.New(f)
	r := audit.Record{Time: time.Now(), Event: "check", Session: "0123456789abcdef", Decision: map[string]any{"tool": "everything__echo", "verdict": "allow"}}
	for b.Loop() {
		l.Write(r)
	}
}
