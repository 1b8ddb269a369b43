// Package pdk is the Go plugin development kit for toolwarden policy
// plugins: WebAssembly modules that answer allow, ask, deny or abstain for
// MCP tool calls (see pdk/ABI.md).
//
// A plugin is a package main that registers its handlers in init and is
// built as a WASI reactor:
//
//	package main
//
//	import (
//		"strings"
//
//		pdk "github.com/toolwarden/toolwarden/pdk/go"
//	)
//
//	func init() {
//		pdk.Register(&pdk.Plugin{
//			Name:    "no-etc",
//			Version: "1.0.0",
//			Check: func(c *pdk.Check) pdk.Verdict {
//				if p := c.Call().Arguments().Get("path").String(); strings.HasPrefix(p, "/etc/") {
//					return pdk.DenyBecause("etc", "writes under /etc are not allowed")
//				}
//				return pdk.NoOpinion()
//			},
//		})
//	}
//
//	func main() {}
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o no-etc.wasm .
//
// The package exports the ABI marker and toolwarden_handle, reads the input
// lazily with an allocation-free JSON scanner (Value) instead of
// encoding/json (about 10x cheaper inside a Go guest), recovers panics into
// an error code, and, while a garbage collection is running, ends the event
// with runtime.Gosched(), without which the Go garbage collector stalls
// inside a long-lived instance. Plugins must not rely on goroutines of
// their own: between events nothing runs.
//
// Accessors such as Check.Call and Call.Capabilities scan the input only as
// far as they must, and remember what they found for the rest of the event
// (the top-level keys, the call's keys, the session's labels). In a guest a
// function call costs tens of nanoseconds and every loop iteration pays for
// the host's deadline check, so read what you need and no more; compare
// strings with Value.StrEquals or Value.HasString rather than converting
// them.
//
// Handler logic is plain Go: Plugin.Handle runs an event natively, so
// plugins can be unit-tested with go test on the host.
package pdk
