package catalog_test

import (
	"testing"

	"github.com/toolwarden/toolwarden/internal/catalog"
)

// What the list path pays for the catalog: Put (hand the entry to the
// background writer) against writing it in place, for server-filesystem's
// 14 tools. Compare the two in one run: the ratio is the point.
func BenchmarkCatalogOnTheListPath(b *testing.B) {
	e := entry("fs", 14)
	b.Run("Write in place", func(b *testing.B) {
		dir := b.TempDir()
		for b.Loop() {
			if err := catalog.Write(dir, e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Put", func(b *testing.B) {
		w := catalog.NewWriter(b.TempDir())
		for b.Loop() {
			w.Put(e, nil)
		}
		b.StopTimer()
		w.Flush()
	})
}
