package session_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/interleave"
	"github.com/toolwarden/toolwarden/internal/session"
)

// BenchmarkRemembered is the cost of the revocation check: a session
// approval is a map lookup (the baseline), an "always" approval stats the
// file on every check so that a change made by any process is seen at
// once. "just changed" is the first 2 s after a change, when the file's
// bytes are compared too (a rewrite within one timestamp tick keeps its
// stamp). Compare the cases as ratios within one run.
func BenchmarkRemembered(b *testing.B) {
	s, steady, racy := rememberedCases(b)
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
	s, steady, racy := rememberedCases(b)
	interleaved(b, []string{"session", "stat", "changed"}, []func() bool{
		func() bool { return remembered2(s, keyA) },
		func() bool { return remembered(steady, keyA) },
		func() bool { return remembered(racy, keyA) },
	})
}

// rememberedCases are keyA remembered three ways: in a session, and in an
// approvals file whose stamp is trusted at once (steady) or whose bytes are
// compared on every check (racy, as in the first 2 s after a change).
func rememberedCases(b *testing.B) (s *session.Session, steady, racy *session.Persistent) {
	file := filepath.Join(b.TempDir(), "approvals.json")
	if err := os.WriteFile(file, []byte(grantFile(keyA)), 0o600); err != nil {
		b.Fatal(err)
	}
	steady = openP(b, file)
	session.TrustStampAtOnce(steady)
	racy = openP(b, file)
	session.SetRacyWindow(racy, time.Hour)
	s = session.NewStore(nil).Get("s")
	s.Remember(keyA)
	return s, steady, racy
}

// interleaved runs the cases with interleave.Blocks and reports each one's
// ratio to the first ("<case>/<first>").
func interleaved(b *testing.B, names []string, cases []func() bool) {
	b.Helper()
	total := interleave.Blocks(b, names, cases)
	for j := 1; j < len(names); j++ {
		b.ReportMetric(float64(total[j])/float64(total[0]), names[j]+"/"+names[0])
	}
}
