// Command example is the conformance policy of pdk/testdata/README.md
// written with the Go PDK. Build and test it:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o example.wasm ./examples/plugins/go/conformance
//	toolwarden plugin test example.wasm pdk/testdata/conformance/cases.json
package main

import pdk "github.com/toolwarden/toolwarden/pdk/go"

var blocked string

func init() {
	pdk.Register(&pdk.Plugin{
		Name:    "example",
		Version: "1.0.0",
		Configure: func(cfg pdk.Value) error {
			blocked = cfg.Get("blocked_tool").String()
			return nil
		},
		Check: func(c *pdk.Check) pdk.Verdict {
			call := c.Call()
			if blocked != "" && call.ToolName() == blocked {
				return pdk.DenyBecause("blocked_tool", "this tool is blocked by the policy config")
			}
			if c.Session().HasLabel("tainted") && call.Capabilities().CanExfiltrate {
				return pdk.AskBecause("tainted_exfiltration", "the session is tainted and this tool can send data out")
			}
			if ro, _ := call.Hints().Get("readOnlyHint"); ro {
				return pdk.AllowBecause("read_only", "the tool is read-only")
			}
			return pdk.NoOpinion()
		},
		Observe: func(o *pdk.Observe) []string {
			if o.Call().Capabilities().SeesUntrustedContent {
				return []string{"tainted"}
			}
			return nil
		},
		List: func(l *pdk.List) []string {
			var hide []string
			l.Tools(func(t pdk.ListTool) bool {
				if blocked != "" && t.Name == blocked {
					hide = append(hide, t.Name)
				}
				return true
			})
			return hide
		},
	})
}

func main() {}
