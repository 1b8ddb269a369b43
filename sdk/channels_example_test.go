package sdk_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/sdk"
)

// An agent without a human at its own UI sends asks to the approval inbox
// (the page `toolwarden inbox` serves); whoever answers there decides the
// call. Here the answer is given as the page gives it, with inbox.Respond.
func ExampleInbox() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "example-inbox")
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "rv")
	_ = os.Mkdir(dir, 0o700)
	os.Setenv(inbox.EnvRuntimeDir, dir) // every process of the user agrees on it
	defer os.Unsetenv(inbox.EnvRuntimeDir)

	h, _ := host.New(ctx, config.Default(), host.Defaults())
	defer h.Close(ctx)
	g := sdk.New(h, sdk.WithApprover(sdk.Inbox(10*time.Minute)))
	fs := g.Client("fs", exampleClient(exampleServer()))

	go func() { // the person at the inbox page
		for {
			if asks, _ := inbox.List(dir); len(asks) == 1 {
				fmt.Printf("inbox: %s on %s, options %d\n", asks[0].Tool, asks[0].Server, len(asks[0].Options))
				_ = inbox.Respond(dir, asks[0].ID, "allow_once", "inbox")
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	fmt.Println(callText(fs, "write_file", `{"path":"/notes.txt","content":"bye"}`))
	// Output:
	// inbox: write_file on fs, options 3
	// written
}

// approval_channel = "none" makes an unattended run deny every ask at
// once, saying which setting did it; the approver is never called.
func ExampleWithApprover_noApprovalChannel() {
	ctx := context.Background()
	cfg, _ := config.LoadBytes("config.toml", []byte(`approval_channel = "none"`))
	h, _ := host.New(ctx, cfg, host.Defaults())
	defer h.Close(ctx)
	g := sdk.New(h, sdk.WithApprover(sdk.Fixed(sdk.AllowOnce)))
	fs := g.Client("fs", exampleClient(exampleServer()))
	fmt.Println(callText(fs, "write_file", `{"path":"/notes.txt","content":"bye"}`))
	// Output:
	// error: toolwarden denied this call to write_file: it needs approval, and approval_channel = "none" at config.toml:1:1 sends asks to nobody; to be asked, set approval_channel to "elicitation", "inbox" or "both" there [no_approval_channel]
}
