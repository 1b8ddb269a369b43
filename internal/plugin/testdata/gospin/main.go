// Command gospin is a hostile Go guest: its check spins in a loop without
// calls (`for { n++ }`) when the input contains "BOOM", else it allows.
// internal/plugin/hostile_test.go builds it with the Go toolchain.
package main

import (
	"bytes"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

var n int

func init() {
	pdk.Register(&pdk.Plugin{Name: "hostile-gospin", Version: "1.0.0", Check: func(c *pdk.Check) pdk.Verdict {
		if bytes.Contains(c.Raw().Raw(), []byte("BOOM")) {
			for {
				n++
			}
		}
		return pdk.AllowBecause("fine", "no BOOM in the input")
	}})
}

func main() {}
