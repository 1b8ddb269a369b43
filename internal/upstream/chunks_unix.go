//go:build unix && !aix

package upstream

import "syscall"

// newChunk maps a chunk of a long line outside Go's heap, and freeChunk
// unmaps it: its memory goes back to the system the moment join has
// copied it, so a large message peaks at its own size plus a chunk, not
// twice its size (heap chunks stay resident until the collector and the
// scavenger get to them). A chunk never leaves lineReader: join copies
// out of it, nothing keeps a view of it.
func newChunk() []byte {
	b, err := syscall.Mmap(-1, 0, readChunk, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, 0, readChunk)
	}
	return b[:0]
}

func freeChunk(b []byte) {
	if err := syscall.Munmap(b[:cap(b)]); err != nil {
		_ = err // a heap chunk (the map failed): the collector frees it
	}
}
