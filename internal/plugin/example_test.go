package plugin_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// Load the built-in trifecta plugin and ask it about an exfiltration-capable
// call in a session that has seen private data and untrusted content.
func Example() {
	ctx := context.Background()
	cache, _ := os.MkdirTemp("", "toolwarden-example-")
	defer os.RemoveAll(cache)
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: cache, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	defer rt.Close(ctx)

	ps, err := plugin.LoadAll(ctx, rt, []*config.Policy{
		{Name: "trifecta", Builtin: "trifecta", Config: map[string]any{"mode": "ask"}},
	}, nil)
	if err != nil {
		panic(err)
	}
	p := ps[0]
	fmt.Println(p.Description().Name, p.Description().Events)

	v := p.Check(ctx, &policy.CheckInput{
		Session: "conv-1",
		Labels:  []string{"private_data_seen", "untrusted_content_seen"},
		Server:  "mail", App: "mail",
		Tool:      &hints.Tool{Name: "send_mail"},
		Arguments: []byte(`{"to":"someone@example.com"}`),
		Caps:      hints.Capabilities{CanExfiltrate: true},
	})
	fmt.Println(v.Verdict, v.Code, v.Remember)
	// Output:
	// trifecta [check observe init]
	// ask lethal_trifecta false
}
