package plugin

import (
	"testing"
	"unsafe"
)

// Linear memory grows in place inside its reservation: the guest's bytes
// stay where they are (nothing is copied), new pages read as zero, and the
// cap still refuses a grow past the limit.
func TestMemoryGrowsInPlace(t *testing.T) {
	a := &memAlloc{limit: 8 << 20}
	a.Allocate(1<<16, 1<<32)
	if a.res == nil {
		t.Skip("no address-space reservation on this platform: memory grows on the Go heap")
	}
	defer a.Free()
	b := a.Reallocate(1 << 16)
	if len(b) != 1<<16 {
		t.Fatalf("len %d, want 64 KiB", len(b))
	}
	for i := range b {
		b[i] = byte(i)
	}
	base := unsafe.Pointer(&b[0])
	for size := uint64(2 << 16); size <= 8<<20; size += 3 << 16 {
		g := a.Reallocate(min(size, 8<<20))
		if g == nil {
			t.Fatalf("grow to %d refused under the limit", size)
		}
		if unsafe.Pointer(&g[0]) != base {
			t.Fatalf("memory moved at %d bytes", size)
		}
		if g[1000] != byte(1000%256) {
			t.Fatalf("contents lost at %d bytes", size)
		}
		if g[len(g)-1] != 0 {
			t.Fatalf("new memory not zero at %d bytes", size)
		}
		g[len(g)-1] = 0 // touch the newest page: it must be writable
		b = g
	}
	if a.hit {
		t.Fatal("limit reported hit under the limit")
	}
	if a.Reallocate(8<<20+1<<16) != nil || !a.hit {
		t.Fatal("a grow past the limit was not refused")
	}
}

// The fallback (no reservation) keeps the same contract.
func TestMemoryGrowsOnHeapWithoutReservation(t *testing.T) {
	a := &memAlloc{limit: 1 << 20}
	b := a.Reallocate(1 << 16)
	b[7] = 7
	g := a.Reallocate(4 << 16)
	if len(g) != 4<<16 || g[7] != 7 || g[len(g)-1] != 0 {
		t.Fatalf("grow lost contents: len %d", len(g))
	}
	if a.Reallocate(1<<20+1) != nil || !a.hit {
		t.Fatal("a grow past the limit was not refused")
	}
}
