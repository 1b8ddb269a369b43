//go:build !unix

package upstream

// newChunk and freeChunk: heap chunks, which the collector frees (see
// chunks_unix.go).
func newChunk() []byte { return make([]byte, 0, readChunk) }

func freeChunk([]byte) {}
