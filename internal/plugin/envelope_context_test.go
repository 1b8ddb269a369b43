package plugin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// Check and observe envelopes carry server_context before the call, with
// only the keys that are known, escaped as any string; a call without a
// context has none.
func TestEnvelopeServerContext(t *testing.T) {
	rt := newRuntime(t, Options{})
	p, err := newPlugin(rt, &config.Policy{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range p.head {
		p.head[ev] = head(Event(ev))
	}
	p.tail = tail(p.name, []byte(`{}`))
	in := &instance{p: p}
	for _, c := range []struct {
		name string
		x    *policy.ServerContext
		want string
	}{
		{"no context", nil, ""},
		{"nothing known", &policy.ServerContext{}, `,"server_context":{},"call":`},
		{"cwd and home", &policy.ServerContext{Cwd: "/srv/app", Home: "/home/me"}, `,"server_context":{"cwd":"/srv/app","home":"/home/me"},"call":`},
		{"home only", &policy.ServerContext{Home: "/h"}, `,"server_context":{"home":"/h"},"call":`},
		{"roots and command-line folders", &policy.ServerContext{Cwd: "/c", Roots: []string{"/r1", "/r\"2"}, ArgDirs: []string{"/a"}},
			`,"server_context":{"cwd":"/c","roots":["/r1","/r\"2"],"arg_dirs":["/a"]},"call":`},
		{"command-line folders only", &policy.ServerContext{ArgDirs: []string{"/a\xff"}}, `,"server_context":{"arg_dirs":["/a\ufffd"]},"call":`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ci := checkInput(`{"path":"x"}`)
			ci.Context = c.x
			check := string(in.appendCheck(nil, ci))
			observe := string(in.appendObserve(nil, &policy.ObserveInput{Tool: testTool, Arguments: []byte(`{}`), Context: c.x}))
			for _, env := range []string{check, observe} {
				if !json.Valid([]byte(env)) {
					t.Fatalf("not JSON: %s", env)
				}
				if c.want == "" && strings.Contains(env, "server_context") || !strings.Contains(env, c.want) {
					t.Errorf("envelope %s\nwant %s", env, c.want)
				}
			}
		})
	}
}
