//go:build wasip1

package pdk

import (
	"runtime"
	"unsafe"
)

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
	// Without a yield at the end of every export, Go's background GC
	// workers never run in a long-lived reactor: a GC cycle that started
	// never finishes and memory grows without bound (docs/plugins.md).
	// Deferred first, so it runs last, after any panic was recovered.
	defer runtime.Gosched()
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

// Log writes a message to the host's log (capped by the host).
func Log(level Level, msg string) { hostLog(uint32(level), msg) }
