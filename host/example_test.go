package host_test

import (
	"context"
	"fmt"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
)

// A destructive filesystem write is asked, remembered for the session once
// the user allows it, and then allowed without asking.
func Example() {
	ctx := context.Background()
	h, err := host.New(ctx, config.Default(), host.Defaults())
	if err != nil {
		panic(err)
	}
	defer h.Close(ctx)

	tool, err := host.ParseTool([]byte(`{"name":"write_file","inputSchema":{"type":"object"},
		"annotations":{"destructiveHint":true,"openWorldHint":false}}`))
	if err != nil {
		panic(err)
	}
	call := host.Call{Session: "conv-1", Server: "fs", Tool: tool}

	d := h.Check(ctx, call)
	fmt.Println(d.Decision, d.Reasons[0].Code, d.Prompt.Options)

	if err := h.Approve("conv-1", &d, host.ForSession); err != nil {
		panic(err)
	}
	d = h.Check(ctx, call)
	fmt.Println(d.Decision, d.Reasons[0].Code)
	// Output:
	// ask destructive [allow_once allow_session always deny]
	// allow remembered
}

// Config decides what the annotations alone would not: here the app hides
// destructive tools, so the call is denied without a prompt.
func ExampleHost_Check() {
	ctx := context.Background()
	cfg, err := config.LoadBytes("config.toml", []byte(`
[apps.fs]
destructive_enabled = false
`))
	if err != nil {
		panic(err)
	}
	h, _ := host.New(ctx, cfg, host.Defaults())
	write, _ := host.ParseTool([]byte(`{"name":"write_file","annotations":{"destructiveHint":true}}`))
	read, _ := host.ParseTool([]byte(`{"name":"read_file","annotations":{"readOnlyHint":true,"openWorldHint":false}}`))

	for _, t := range []*host.Tool{write, read} {
		d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: t})
		fmt.Printf("%s: %s (%s)\n", t.Name, d.Decision, d.Reasons[0].Code)
	}
	// Output:
	// write_file: deny (blocked_by_app_config)
	// read_file: allow (read_only)
}
