package plugin

import (
	"context"
	"testing"

	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/host/hints"
	"github.com/toolwarden/toolwarden/host/policy"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	p, err := Load(ctx, rt, &config.Policy{Name: "tri", Builtin: "trifecta", Config: map[string]any{"mode": "deny"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", p.Description())
	tool := &hints.Tool{Name: "send", HashHex: "abcd"}
	v := p.Check(ctx, &policy.CheckInput{Session: "s", Labels: []string{"untrusted_content_seen", "private_data_seen"}, Server: "x", App: "x", Tool: tool, Arguments: []byte(`{"a":1}`), Caps: hints.Capabilities{CanExfiltrate: true}})
	t.Logf("%+v", v)
	o := p.Observe(ctx, &policy.ObserveInput{Tool: tool, Caps: hints.Capabilities{ReadsPrivateData: true}})
	t.Logf("%+v", o)
}
