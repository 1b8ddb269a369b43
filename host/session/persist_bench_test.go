package session_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host/session"
)

// BenchmarkRemembered is the cost of the revocation check: a session
// approval is a map lookup (the baseline), an "always" approval stats the
// file on every check so that a change made by any process is seen at
// once. "just changed" is the first 2 s after a change, when the file's
// bytes are compared too (a rewrite within one timestamp tick keeps its
// stamp). Compare the cases as ratios within one run.
func BenchmarkRemembered(b *testing.B) {
	file := filepath.Join(b.TempDir(), "approvals.json")
	if err := os.WriteFile(file, []byte(grantFile(keyA)), 0o600); err != nil {
		b.Fatal(err)
	}
	steady := openP(b, file)
	session.TrustStampAtOnce(steady)
	racy := openP(b, file)
	session.SetRacyWindow(racy, time.Hour)
	s := session.NewStore(nil).Get("s")
	s.Remember(keyA)
	for _, c := range []struct {
		name       string
		remembered func() bool
	}{
		{"session approval, map lookup (baseline)", func() bool { return remembered2(s, keyA) }},
		{"always approval, stat per check", func() bool { return remembered(steady, keyA) }},
		{"always approval, file just changed", func() bool { return remembered(racy, keyA) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			if !c.remembered() {
				b.Fatal("not remembered")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if !c.remembered() {
					b.Fatal("not remembered")
				}
			}
		})
	}
}

func remembered2(s *session.Session, k session.ApprovalKey) bool {
	return s.Remembered(k.App, k.Server, k.Connector, k.Tool, k.Hash)
}

// BenchmarkRememberedInterleaved measures the same cases as
// BenchmarkRemembered block by block in turn, so that a busy machine slows
// them alike, and reports each one's time per check and its ratio to the
// session lookup (metrics "<case>/session").
func BenchmarkRememberedInterleaved(b *testing.B) {
	file := filepath.Join(b.TempDir(), "approvals.json")
	if err := os.WriteFile(file, []byte(grantFile(keyA)), 0o600); err != nil {
		b.Fatal(err)
	}
	steady := openP(b, file)
	session.TrustStampAtOnce(steady)
	racy := openP(b, file)
	session.SetRacyWindow(racy, time.Hour)
	s := session.NewStore(nil).Get("s")
	s.Remember(keyA)
	interleave(b, []string{"session", "stat", "changed"}, []func() bool{
		func() bool { return remembered2(s, keyA) },
		func() bool { return remembered(steady, keyA) },
		func() bool { return remembered(racy, keyA) },
	})
}

// interleave runs each case in blocks, all cases in turn, and reports
// each case's ns per call and its ratio to the first case.
func interleave(b *testing.B, names []string, cases []func() bool) {
	b.Helper()
	const block = 16
	total := make([]time.Duration, len(cases))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, f := range cases {
			start := time.Now()
			for k := 0; k < block; k++ {
				if !f() {
					b.Fatalf("%s: not remembered", names[j])
				}
			}
			total[j] += time.Since(start)
		}
	}
	for j, name := range names {
		b.ReportMetric(float64(total[j].Nanoseconds())/float64(b.N*block), name+"-ns/call")
		if j > 0 {
			b.ReportMetric(float64(total[j])/float64(total[0]), name+"/"+names[0])
		}
	}
	b.ReportMetric(0, "ns/op")
}
