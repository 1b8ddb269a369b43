package plugin

import (
	"context"
	"testing"

	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/host/hints"
	"github.com/toolwarden/toolwarden/host/policy"
)

func BenchmarkQuick(b *testing.B) {
	ctx := context.Background()
	rt, _ := NewRuntime(ctx, Options{CacheDir: b.TempDir()})
	defer rt.Close(ctx)
	p, err := Load(ctx, rt, &config.Policy{Name: "tri", Builtin: "trifecta"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	tool := &hints.Tool{Name: "send", HashHex: "abcd"}
	in := &policy.CheckInput{Session: "s", Labels: []string{"untrusted_content_seen", "private_data_seen"}, Server: "x", App: "x", Tool: tool, Arguments: []byte(`{"a":1}`), Caps: hints.Capabilities{CanExfiltrate: true}}
	for i := 0; i < 1000; i++ {
		p.Check(ctx, in)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Check(ctx, in)
	}
}

func BenchmarkQuickNoCOD(b *testing.B) {
	noCOD = true
	defer func() { noCOD = false }()
	BenchmarkQuick(b)
}
