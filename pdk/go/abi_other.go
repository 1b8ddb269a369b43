//go:build !wasip1

package pdk

// Outside wasm (native tests of plugin logic) logging goes nowhere.

// Log writes a message to the host's log (capped by the host).
func Log(level Level, msg string) {}
