// Command gobudget is a test guest of plugin session state: it lets
// "budget" calls per session through (config "budget", default 2) and asks
// after that, counting at check time; observe records the last tool seen.
// Tool "spin" never returns (its instance is discarded at the deadline) and
// tool "flood" sets more entries than the host allows.
package main

import (
	"strconv"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

var budget int64 = 2

func init() {
	pdk.Register(&pdk.Plugin{
		Name:    "gobudget",
		Version: "1.0.0",
		State:   true,
		Configure: func(cfg pdk.Value) error {
			if f, ok := cfg.Get("budget").Float(); ok {
				budget = int64(f)
			}
			return nil
		},
		Check: func(c *pdk.Check) pdk.Verdict {
			switch c.Call().ToolName() {
			case "spin":
				for {
				}
			case "flood":
				for i := 0; i <= pdk.MaxStateKeys; i++ {
					c.State().Set("k"+strconv.Itoa(i), "v")
				}
				return pdk.NoOpinion()
			}
			if n := c.State().Counter("calls"); n >= budget {
				return pdk.AskBecause("budget_spent", strconv.FormatInt(n, 10)+" calls already ran in this session")
			}
			return pdk.AllowBecause("within_budget", "within the session's budget").Add("calls", 1)
		},
		Observe: func(o *pdk.Observe) []string {
			o.State().Set("last_tool", o.Call().ToolName())
			return nil
		},
	})
}

func main() {}
