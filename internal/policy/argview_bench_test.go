package policy

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
)

// BenchmarkPromptArguments is what the prompt's completeness check costs
// an ask, next to the whole decision it is part of ("decide", the
// baseline in the same run): "measure" is the pipeline's check on the
// arguments of BenchmarkCheck (host), "measure-3k" on a 3000-byte write,
// "view-3k" the full rendering a form or a hook prints, and "measure-deep"
// 250 levels over 200 kB of array (each byte read once, not once a level).
func BenchmarkPromptArguments(b *testing.B) {
	cfg, err := config.LoadBytes("b.toml", []byte("[apps.fs]\ndestructive_enabled = true\n"))
	if err != nil {
		b.Fatal(err)
	}
	rules, err := Compile(cfg)
	if err != nil {
		b.Fatal(err)
	}
	tool, err := hints.ParseTool([]byte(`{"name":"write_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`))
	if err != nil {
		b.Fatal(err)
	}
	small := json.RawMessage(`{"path":"/home/me/src/notes.txt","content":"hello"}`)
	big := json.RawMessage(`{"content":"` + strings.Repeat("x", 3000) + `","path":"/home/me/src/notes.txt"}`)
	in := &Input{Session: "s", Server: "fs", Tool: tool, Arguments: small}
	ctx := context.Background()
	if d := rules.Decide(ctx, in); d.Decision != Ask {
		b.Fatal(d.Decision)
	}
	b.Run("decide", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			rules.Decide(ctx, in)
		}
	})
	b.Run("measure", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			argumentsIncomplete(small, nil)
		}
	})
	b.Run("measure-3k", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			argumentsIncomplete(big, []string{"/path"})
		}
	})
	deep := json.RawMessage(strings.Repeat(`{"a":`, 250) + `[` + strings.Repeat(`1,`, 100000) + `1]` + strings.Repeat(`}`, 250))
	b.Run("measure-deep", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			argumentsIncomplete(deep, nil)
		}
	})
	b.Run("view-3k", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			v := ViewArguments(big, []string{"/path"})
			_ = v.Text()
		}
	})
}
