//go:build wasip1

package pdk

import (
	"runtime"
	"unsafe"
)

// writeBarrier is the runtime's write barrier switch, on while a garbage
// collection cycle is marking. The runtime exports it for linkname
// (go.dev/issue/67401: "Do not remove or change the type signature").
//
//go:linkname writeBarrier runtime.writeBarrier
var writeBarrier struct {
	enabled bool
	pad     [3]byte
	alignme uint64
}

// The wasm glue: the ABI marker, toolwarden_handle and the host imports.

//go:wasmimport toolwarden input_read
func inputRead(dst unsafe.Pointer, n uint32) uint32

//go:wasmimport toolwarden output_write
func outputWrite(src unsafe.Pointer, n uint32) uint32

//go:wasmimport toolwarden log
func hostLog(level uint32, msg string)

//go:wasmexport toolwarden_abi_v1
func abiV1() {}

// inputBuf is reused across events: a warm instance allocates nothing to
// read its input.
var inputBuf []byte

//go:wasmexport toolwarden_handle
func handle(event, inputLen uint32) (code uint32) {
	// Deferred first, so it runs last, after any panic was recovered.
	defer yield()
	p := registered
	if p == nil {
		msg := "pdk: no plugin registered (call pdk.Register in init)"
		outputWrite(unsafe.Pointer(unsafe.StringData(msg)), uint32(len(msg)))
		return CodeInternal
	}
	if uint32(cap(inputBuf)) < inputLen {
		inputBuf = make([]byte, inputLen)
	}
	in := inputBuf[:inputLen]
	for n := uint32(0); n < inputLen; {
		got := inputRead(unsafe.Pointer(&in[n]), inputLen-n)
		if got == 0 {
			in = in[:n]
			break
		}
		n += got
	}
	code, out := p.Handle(event, in)
	if len(out) > 0 && outputWrite(unsafe.Pointer(&out[0]), uint32(len(out))) != 0 {
		return CodeInternal
	}
	return code
}

// yield lets the runtime's other goroutines run, while a garbage
// collection is marking. Once an export returns, the Go runtime schedules
// no other goroutine until the next export (golang/go#65199), so without a
// yield the background mark workers never run: a GC cycle that started
// never finishes and memory grows without bound (docs/plugins.md). Outside
// a cycle there is nothing to wait for, and a yield (a switch through the
// scheduler, which unwinds the wasm stack) would cost more than most
// events.
func yield() {
	if writeBarrier.enabled {
		runtime.Gosched()
	}
}

// Log writes a message to the host's log (capped by the host).
func Log(level Level, msg string) { hostLog(uint32(level), msg) }
