// Command godata is a test guest of policy data files: it allows calls to
// the servers its data file lists ({"hosts":[..]}) and denies others, and
// says in each reason how many times its instance got the data. Tool
// "spin" never returns, so that its instance is discarded.
package main

import (
	"strconv"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

var (
	hosts = map[string]bool{}
	inits int
)

func init() {
	pdk.Register(&pdk.Plugin{
		Name:    "godata",
		Version: "1.0.0",
		Data: func(data pdk.Value) error {
			inits++
			data.Get("hosts").Each(func(_ int, v pdk.Value) bool {
				hosts[v.String()] = true
				return true
			})
			return nil
		},
		Check: func(c *pdk.Check) pdk.Verdict {
			if c.Call().ToolName() == "spin" {
				for {
				}
			}
			n := "inits=" + strconv.Itoa(inits)
			if hosts[c.Call().Server()] {
				return pdk.AllowBecause("listed_host", n)
			}
			return pdk.DenyBecause("unlisted_host", n)
		},
	})
}

func main() {}
