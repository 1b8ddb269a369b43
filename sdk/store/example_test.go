package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/sdk"
	"github.com/toolwarden/toolwarden/sdk/store"
)

// A guard whose host keeps "always" approvals in a shared store: every
// other guard, wrap, proxy or hook on the same store (--store) shares
// them, and a revoke made anywhere holds on their next call.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "store-example")
	defer os.RemoveAll(dir)

	st, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "store.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	cfg, err := host.LoadConfig()
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := host.New(ctx, cfg, host.Defaults().WithStore(st))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close(ctx)

	g := sdk.New(h, sdk.WithApprover(sdk.Fixed(sdk.AllowAlways)))
	_ = g // g.Client("files", mcpClient) guards an mcp-go client

	fmt.Println(st.Engine(), h.CanRememberAlways())
	// Output: sqlite true
}
