// Command guest is the trifecta plugin as a WebAssembly reactor; see
// scripts/build-plugins.sh.
package main

import (
	pdk "github.com/toolwarden/toolwarden/pdk/go"
	"github.com/toolwarden/toolwarden/plugins/trifecta"
)

func init() { pdk.Register(trifecta.New()) }

func main() {}
