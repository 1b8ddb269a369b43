// Command goregexguard is a Go guest that does real work for the tests
// that need one (allocations per event, memory over many events with big
// inputs: internal/plugin/plugin_test.go): it reads argguard's rule syntax
// for ask_regex rules ({"rules":[{"arg":"body","ask_regex":"x{3}"}]}) and
// asks when a top-level string argument matches, with Go's regexp inside
// the guest.
package main

import (
	"regexp"
	"strconv"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

type rule struct {
	arg string
	re  *regexp.Regexp
}

var rules []rule

func configure(cfg pdk.Value) error {
	rules = rules[:0]
	var err error
	cfg.Get("rules").Each(func(i int, r pdk.Value) bool {
		at := "rules[" + strconv.Itoa(i) + "]"
		re, rerr := regexp.Compile(r.Get("ask_regex").String())
		if rerr != nil {
			err = pdk.ConfigError(at+".ask_regex", rerr.Error())
			return false
		}
		rules = append(rules, rule{arg: r.Get("arg").String(), re: re})
		return true
	})
	return err
}

func check(c *pdk.Check) pdk.Verdict {
	args := c.Call().Arguments()
	for _, r := range rules {
		if s, ok := args.Get(r.arg).Str(); ok && r.re.MatchString(s) {
			return pdk.AskBecause("arg_needs_approval", "argument "+pdk.Quote(r.arg)+" matches "+pdk.Quote(r.re.String()))
		}
	}
	return pdk.NoOpinion()
}

func init() {
	pdk.Register(&pdk.Plugin{Name: "goregexguard", Version: "1.0.0", Configure: configure, Check: check})
}

func main() {}
