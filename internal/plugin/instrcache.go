//go:build !toolwarden_wazero_interrupt

package plugin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/toolwarden/toolwarden/internal/instrument"
)

// instrumentModule is instrument.Module; tests count its calls.
var instrumentModule = instrument.Module

// instrumented is bin with the deadline checks added (instrument.Module).
// A hook event is one process, and instrumenting argguard again in every
// one was about a fifth of loading it from the disk cache: with a disk
// cache, the result is kept there too, named for the binary's digest and
// instrument.Version, next to the compiled code wazero keeps (native code
// from the same folder, so the folder is trusted as much either way). The
// file ends with the SHA-256 of what precedes it: a damaged one is
// instrumented again and replaced, never compiled.
func (rt *Runtime) instrumented(bin []byte, sum [sha256.Size]byte) ([]byte, error) {
	if rt.instrDir == "" {
		return instrumentModule(bin)
	}
	path := filepath.Join(rt.instrDir, hex.EncodeToString(sum[:])+"-v"+instrument.Version+".wasm")
	if data, err := os.ReadFile(path); err == nil && len(data) > sha256.Size {
		ibin, check := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
		if got := sha256.Sum256(ibin); bytes.Equal(got[:], check) {
			return ibin, nil
		}
	}
	ibin, err := instrumentModule(bin)
	if err != nil {
		return nil, err
	}
	keepInstrumented(rt.instrDir, path, ibin)
	return ibin, nil
}

// keepInstrumented writes ibin and its digest under a temporary name and
// renames it into place, so that another process reads all of it or
// nothing. Failing to keep it only costs the next process the work.
func keepInstrumented(dir, path string, ibin []byte) {
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return
	}
	check := sha256.Sum256(ibin)
	_, werr := f.Write(append(ibin[:len(ibin):len(ibin)], check[:]...))
	if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), path) != nil {
		os.Remove(f.Name())
	}
}
