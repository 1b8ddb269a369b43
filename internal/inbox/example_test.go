package inbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// An asker posts an ask and waits; a channel (here the same program, as the
// browser inbox would) lists it and answers; the first answer wins.
func Example() {
	tmp, _ := os.MkdirTemp("", "inbox-example")
	defer os.RemoveAll(tmp)
	os.Setenv(inbox.EnvRuntimeDir, filepath.Join(tmp, "rv"))
	defer os.Unsetenv(inbox.EnvRuntimeDir)
	dir, err := inbox.Dir()
	if err != nil {
		fmt.Println(err)
		return
	}

	p, err := inbox.Post(dir, inbox.Ask{
		Origin: "sdk", Server: "fs", Tool: "write_file",
		Arguments: `{"path": "notes.txt"}`,
		Options:   []inbox.Option{{ID: "allow_once", Title: "Allow once"}, {ID: "deny", Title: "Deny"}},
		Expires:   time.Now().Add(time.Minute),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()

	asks, _ := inbox.List(dir)
	fmt.Println(asks[0].Server, asks[0].Tool, asks[0].Arguments)
	fmt.Println(inbox.Respond(dir, asks[0].ID, "allow_once", "inbox"))
	fmt.Println(inbox.Respond(dir, asks[0].ID, "deny", "inbox") != nil) // too late

	ans, err := p.Wait(context.Background())
	fmt.Println(ans.Option, ans.Channel, err)
	// Output:
	// fs write_file {"path": "notes.txt"}
	// <nil>
	// true
	// allow_once inbox <nil>
}
