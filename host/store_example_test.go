package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store"
)

// Two hosts on one store are two replicas of a gateway: an "always" given
// through one covers the same caller's calls through the other, and an
// approver answers another's ask with ApproveBy.
func ExampleSettings_WithStore() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example-store-")
	defer os.RemoveAll(dir)
	url := "sqlite:" + filepath.Join(dir, "store.db")
	cfg, _ := host.ParseConfig("config.toml", []byte(`
[apps.deploy.tools.rollback]
approvers = ["group:leads"]
`))
	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	replica := func() *host.Host {
		st, _ := store.Open(ctx, url, store.Options{}) // a library user passes any session.Shared
		h, _ := host.New(ctx, cfg, host.Defaults().WithStore(st))
		closers = append(closers, func() { h.Close(ctx); st.Close() })
		return h
	}
	a, b := replica(), replica()
	rollback, _ := host.ParseTool([]byte(`{"name":"rollback","annotations":{"destructiveHint":true}}`))
	dave := host.Caller{Name: "dave", Groups: []string{"ops"}}
	lena := host.Caller{Name: "lena", Groups: []string{"leads"}}

	_ = a.SetCaller("s1", dave)
	d := a.Check(ctx, host.Call{Session: "s1", Server: "deploy", Tool: rollback})
	fmt.Println("through A:", d.Decision, d.Approvers)
	fmt.Println(errors.Is(a.ApproveBy("s1", &d, host.Always, dave, session.GrantScope{}), host.ErrNotApprover))
	fmt.Println(a.ApproveBy("s1", &d, host.Always, lena, session.GrantScope{}))

	_ = b.SetCaller("s2", dave)
	d = b.Check(ctx, host.Call{Session: "s2", Server: "deploy", Tool: rollback})
	fmt.Println("through B:", d.Decision)
	// Output:
	// through A: ask [group:leads]
	// true
	// <nil>
	// through B: allow
}
