// Package plugins holds toolwarden's first-party policy plugins: their
// sources (one folder each: the module's Rust source in rust/, written
// with pdk/rust, and its case files in cases/, which `toolwarden plugin
// test` runs and go test ./plugins runs against these modules) and the
// WebAssembly modules built from them, which are embedded in the binary
// and selected with builtin = "<name>" in a [policies.<name>] table.
//
// The .wasm files are committed and rebuilt reproducibly by
// scripts/build-plugins.sh; CI rebuilds them and fails if they differ.
package plugins

import (
	_ "embed"
	"sort"
)

//go:embed trifecta.wasm
var trifectaWasm []byte

//go:embed argguard.wasm
var argguardWasm []byte

//go:embed secrets.wasm
var secretsWasm []byte

var builtins = map[string][]byte{
	"trifecta": trifectaWasm,
	"argguard": argguardWasm,
	"secrets":  secretsWasm,
}

// Builtin returns the module bytes of a first-party plugin. The bytes are
// shared: do not modify them.
func Builtin(name string) ([]byte, bool) {
	b, ok := builtins[name]
	return b, ok
}

// Modules returns every first-party module by name, for a host's
// Settings.WithBuiltins. The map is the caller's; the bytes are shared: do
// not modify them.
func Modules() map[string][]byte {
	out := make(map[string][]byte, len(builtins))
	for n, b := range builtins {
		out[n] = b
	}
	return out
}

// Names lists the built-in plugins, sorted.
func Names() []string {
	out := make([]string, 0, len(builtins))
	for n := range builtins {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
