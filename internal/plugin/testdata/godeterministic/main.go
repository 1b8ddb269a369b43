// Command godeterministic is a test guest of section 15 (pdk/ABI.md): it
// declares "deterministic" when its config says so, and — breaking that
// promise on purpose, so that a test can see when the host entered it —
// answers every check with how many checks this instance has run. With
// "state" in its config it also asks for session state, which it never
// changes.
package main

import (
	"strconv"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

var calls int

var plugin = &pdk.Plugin{
	Name:    "godeterministic",
	Version: "1.0.0",
	Needs:   []string{"labels", "tool", "arguments"},
	Check: func(c *pdk.Check) pdk.Verdict {
		calls++
		return pdk.AskBecause("calls", strconv.Itoa(calls))
	},
}

func init() {
	plugin.Configure = func(cfg pdk.Value) error {
		plugin.Deterministic, _ = cfg.Get("deterministic").Bool()
		plugin.State, _ = cfg.Get("state").Bool()
		return nil
	}
	pdk.Register(plugin)
}

func main() {}
