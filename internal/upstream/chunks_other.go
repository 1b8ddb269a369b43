//go:build !unix || aix

package upstream

// newChunk and freeChunk: heap chunks, which the collector frees (see
// chunks_unix.go; AIX's syscall package has no MAP_ANON).
func newChunk() []byte { return make([]byte, 0, readChunk) }

func freeChunk([]byte) {}
