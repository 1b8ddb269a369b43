// Command guest is the argguard plugin as a WebAssembly reactor; see
// scripts/build-plugins.sh.
package main

import (
	pdk "github.com/toolwarden/toolwarden/pdk/go"
	"github.com/toolwarden/toolwarden/plugins/argguard"
)

func init() { pdk.Register(argguard.New()) }

func main() {}
