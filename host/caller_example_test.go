package host_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolwarden/toolwarden/host"
)

// A gateway binds each session to the caller it authenticated; the
// session's decisions then apply the config's principals, groups and
// approvers to that caller.
func ExampleHost_SetCaller() {
	ctx := context.Background()
	cfg, _ := host.ParseConfig("config.toml", []byte(`
[apps.deploy]
groups = ["ops"]
approvers = ["group:leads"]
`))
	h, _ := host.New(ctx, cfg, host.Defaults())
	rollout, _ := host.ParseTool([]byte(`{"name":"rollout","annotations":{"destructiveHint":true}}`))

	_ = h.SetCaller("s1", host.Caller{Name: "mallory", Groups: []string{"dev"}})
	d := h.Check(ctx, host.Call{Session: "s1", Server: "deploy", Tool: rollout})
	fmt.Println(d.Decision, d.Reasons[0].Code)

	_ = h.SetCaller("s2", host.Caller{Name: "dave", Groups: []string{"ops"}})
	d = h.Check(ctx, host.Call{Session: "s2", Server: "deploy", Tool: rollout})
	fmt.Println(d.Decision, d.Approvers, d.MayApprove(host.Caller{Name: "dave", Groups: []string{"ops"}}))
	fmt.Println(errors.Is(h.Approve("s2", &d, host.Once), host.ErrNotApprover))
	fmt.Println(errors.Is(h.SetCaller("s2", host.Caller{Name: "lena", Groups: []string{"leads"}}), host.ErrCallerRebound))
	// Output:
	// deny principal_not_allowed
	// ask [group:leads] false
	// true
	// true
}
