package plugintest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/plugin"
)

// caseConfigs loads the plugin for cases that give their own config. One
// plugin is kept at a time: a table of configs lists each config's cases
// together, and a plugin per config would hold an instance pool each.
type caseConfigs struct {
	rt   *plugin.Runtime
	bin  []byte
	name string

	key  string // the loaded config's JSON
	p    *plugin.Plugin
	err  error
	json []byte // the envelope's plugin member for it
}

// plugin returns the plugin for tc's own config (nil when tc has none, so
// the file's serves), or, in done, the case's outcome when it is decided
// at load: the config is refused, as expected or not.
func (c *caseConfigs) plugin(ctx context.Context, tc *Case) (p *plugin.Plugin, pluginJSON []byte, done []string) {
	if tc.Config == nil {
		return nil, nil, nil
	}
	raw, err := json.Marshal(tc.Config)
	if err != nil {
		return nil, nil, []string{"config: " + err.Error()}
	}
	if string(raw) != c.key {
		c.close()
		c.key = string(raw)
		c.p, c.err = plugin.FromBytes(ctx, c.rt, &config.Policy{Name: c.name, Config: tc.Config, TimeoutMs: 5000}, c.bin)
		c.json, _ = json.Marshal(map[string]any{"name": c.name, "config": tc.Config})
	}
	switch {
	case tc.LoadError == "" && c.err != nil:
		return nil, nil, []string{"the plugin is refused at load with this config: " + c.err.Error()}
	case tc.LoadError == "":
		return c.p, c.json, nil
	case c.err == nil:
		return nil, nil, []string{fmt.Sprintf("want the plugin refused at load with %q; it loaded", tc.LoadError)}
	case !strings.Contains(c.err.Error(), tc.LoadError):
		return nil, nil, []string{fmt.Sprintf("want a load error containing %q, got %v", tc.LoadError, c.err)}
	}
	return nil, nil, []string{}
}

func (c *caseConfigs) close() {
	if c.p != nil {
		c.p.Close()
	}
	c.key, c.p, c.err = "", nil, nil
}

// checkLoadErrorCase: a case that expects its config refused at load runs
// no event, so it gives nothing else.
func checkLoadErrorCase(tc *Case, where string, bad func(string, ...any)) {
	if tc.Config == nil {
		bad("%s: \"load_error\" in a case needs the case's own \"config\" (the file's load_error is for the file's)", where)
	}
	if len(tc.Event) > 0 || len(tc.Steps) > 0 || len(tc.Input) > 0 || tc.InputText != nil || !reflect.ValueOf(tc.Expect).IsZero() {
		bad("%s: a case with \"load_error\" runs no event: give only name, config and load_error", where)
	}
}
