package host_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// noSendWhenTainted is a Go list plugin: once the session is tainted, it
// hides the tool that sends mail.
type noSendWhenTainted struct{}

func (noSendWhenTainted) Name() string { return "no-send" }
func (noSendWhenTainted) List(_ context.Context, in *policy.ListInput) ([]string, error) {
	if slices.Contains(in.Labels, "tainted") {
		return []string{"send_mail"}, nil
	}
	return nil, nil
}

// A tool a plugin hides is left out of the list and denied when called
// anyway, from the moment the plugin would hide it: here, once the session
// gains a label, before the client lists the tools again.
func ExampleHost_Filter() {
	ctx := context.Background()
	h, _ := host.New(ctx, config.Default(), host.Defaults().WithPlugin(noSendWhenTainted{}))
	send, _ := host.ParseTool([]byte(`{"name":"send_mail","annotations":{"readOnlyHint":true}}`))

	fmt.Println(len(h.Filter(ctx, "s", "mail", []*host.Tool{send})))
	h.Session("s").AddLabels("tainted")
	d := h.Check(ctx, host.Call{Session: "s", Server: "mail", Tool: send})
	fmt.Println(d.Decision, d.Reasons[0].Code, d.Reasons[0].Source)
	fmt.Println(len(h.Filter(ctx, "s", "mail", []*host.Tool{send})))
	// Output:
	// 1
	// deny hidden_by_plugin plugin:no-send
	// 0
}
