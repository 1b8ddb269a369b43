package host_test

import (
	"context"
	"fmt"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
)

// A call carries what is known of its server's paths, so that argguard
// judges the file the server will write: "secret/notes.txt" to a server in
// /srv/app is /srv/app/secret/notes.txt. Without a context the same path
// cannot be resolved, and the deny rule fails closed.
func ExampleServerContext() {
	ctx := context.Background()
	cfg, err := config.LoadBytes("config.toml", []byte(`
[policies.argguard]
builtin = "argguard"
[policies.argguard.config]
rules = [{ tool = "write_file", arg = "path", deny_glob = "/srv/app/secret/**" }]
`))
	if err != nil {
		panic(err)
	}
	h, err := host.New(ctx, cfg, host.Defaults())
	if err != nil {
		panic(err)
	}
	defer h.Close(ctx)
	tool, _ := host.ParseTool([]byte(`{"name":"write_file","annotations":{"destructiveHint":false,"openWorldHint":false}}`))
	args := []byte(`{"path":"secret/notes.txt","content":"x"}`)

	for _, x := range []*host.ServerContext{{Cwd: "/srv/app"}, {Cwd: "/home/me"}, nil} {
		d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: tool, Arguments: args, Context: x})
		fmt.Println(d.Decision, d.Reasons[0].Message)
	}
	// Output:
	// deny argument "path" = "secret/notes.txt" (resolved: "/srv/app/secret/notes.txt") matches deny_glob "/srv/app/secret/**"
	// allow write_file neither changes anything nor reaches outside this machine: allowed
	// deny argument "path" = "secret/notes.txt" (unresolved: the server's working directory is unknown) matches deny_glob "/srv/app/secret/**"
}
