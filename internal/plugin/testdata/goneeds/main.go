// Command goneeds is a test guest of needs (pdk/ABI.md section 14): it
// declares the needs its config names ({"needs":[..]}; none: it declares
// nothing, as a v1 plugin) and answers every check with the envelope it
// got as its reason, so that a test sees exactly what the host sent.
package main

import pdk "github.com/toolwarden/toolwarden/pdk/go"

var plugin = &pdk.Plugin{
	Name:    "goneeds",
	Version: "1.0.0",
	Check: func(c *pdk.Check) pdk.Verdict {
		return pdk.AskBecause("envelope", string(c.Raw().Raw()))
	},
}

func init() {
	plugin.Configure = func(cfg pdk.Value) error {
		if n := cfg.Get("needs"); n.Exists() {
			needs := []string{}
			n.Each(func(_ int, v pdk.Value) bool {
				needs = append(needs, v.String())
				return true
			})
			plugin.Needs = needs
		}
		return nil
	}
	pdk.Register(plugin)
}

func main() {}
