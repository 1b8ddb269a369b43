package host_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
)

// Reload changes the policy of a running host: the session keeps its
// approval, the new config decides the next call, and a config whose
// plugin does not load is refused while the running one keeps deciding.
func ExampleHost_Reload() {
	ctx := context.Background()
	h, _ := host.New(ctx, config.Default(), host.Defaults())
	defer h.Close(ctx)
	write, _ := host.ParseTool([]byte(`{"name":"write_file","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}}`))
	read, _ := host.ParseTool([]byte(`{"name":"read_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`))
	call := func(t *host.Tool) host.Call {
		return host.Call{Session: "s", Server: "fs", Tool: t, Arguments: json.RawMessage(`{}`)}
	}
	d := h.Check(ctx, call(write))
	_ = h.Approve("s", &d, host.ForSession)

	stricter, _ := config.LoadBytes("config.toml", []byte("[apps.fs.tools.read_file]\nenabled = false\n"))
	fmt.Println(h.Reload(ctx, stricter))
	fmt.Println(h.Check(ctx, call(write)).Decision, h.Check(ctx, call(read)).Decision)

	broken, _ := config.LoadBytes("config.toml", []byte("[policies.mine]\nwasm = \"/nowhere/mine.wasm\"\n"))
	fmt.Println(h.Reload(ctx, broken) != nil, h.Config() == stricter)
	// Output:
	// <nil>
	// allow deny
	// true true
}
