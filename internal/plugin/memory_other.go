//go:build !(unix && (amd64 || arm64 || riscv64 || ppc64le || s390x || loong64))

package plugin

// reservation is not available here: linear memory grows on the Go heap
// (memAlloc).
type reservation struct{}

func reserve(uint64) *reservation               { return nil }
func (*reservation) grow(uint64) ([]byte, bool) { return nil, false }
func (*reservation) release()                   {}
