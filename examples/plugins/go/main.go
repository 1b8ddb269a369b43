// Command go is the rootguard example policy as a Go WebAssembly plugin:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o rootguard.wasm .
//
// The policy itself lives in package rootguard, so it can be unit-tested and
// benchmarked natively; this file only registers it.
package main

import (
	pdk "github.com/toolwarden/toolwarden/pdk/go"

	"github.com/toolwarden/toolwarden/examples/plugins/go/rootguard"
)

func init() { pdk.Register(rootguard.New()) }

func main() {}
