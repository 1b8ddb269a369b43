// Command goargguard is argguard's Go reference (plugins/argguard) as a Go
// guest: the shipped argguard module is Rust, so the tests that need a real
// Go guest (allocations, memory over many events) build this one with the
// Go toolchain (internal/plugin/plugin_test.go), and the Go PDK keeps a user
// that does real work.
package main

import (
	pdk "github.com/toolwarden/toolwarden/pdk/go"
	"github.com/toolwarden/toolwarden/plugins/argguard"
)

func init() { pdk.Register(argguard.New()) }

func main() {}
