//go:build unix && (amd64 || arm64 || riscv64 || ppc64le || s390x || loong64)

package plugin

import (
	"runtime"
	"syscall"
)

// reservation is address space for one linear memory, mapped without
// access; grow makes a prefix of it readable and writable. The kernel
// supplies zeroed pages on first touch, so grown memory reads as zero,
// as wasm requires (memory never shrinks, and an instance is never reused
// after its memory is freed).
type reservation struct {
	region  []byte // the whole reservation
	open    uint64 // bytes made accessible so far
	cleanup runtime.Cleanup
}

// reserve maps n bytes of inaccessible address space, or returns nil (the
// caller then grows memory on the Go heap).
func reserve(n uint64) *reservation {
	const page = 1 << 16 // a wasm page; a multiple of every OS page size
	n = (n + page - 1) &^ (page - 1)
	if n == 0 {
		return nil
	}
	region, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil
	}
	r := &reservation{region: region}
	// An instance that is dropped without Close (it never is; this is a
	// safety net) must not keep its mapping forever.
	r.cleanup = runtime.AddCleanup(r, func(region []byte) { _ = syscall.Munmap(region) }, region)
	return r
}

// grow makes the first size bytes accessible and returns them; false when
// size is past the reservation or the kernel refuses.
func (r *reservation) grow(size uint64) ([]byte, bool) {
	if size > uint64(len(r.region)) {
		return nil, false
	}
	if size > r.open {
		if err := syscall.Mprotect(r.region[r.open:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil, false
		}
		r.open = size
	}
	return r.region[:size:size], true
}

// release unmaps the reservation. The memory must not be touched after.
func (r *reservation) release() {
	if r.region != nil {
		r.cleanup.Stop() // or it would unmap the range again, maybe someone else's by then
		_ = syscall.Munmap(r.region)
		r.region = nil
	}
}
