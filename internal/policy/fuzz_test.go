package policy_test

import (
	"context"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// FuzzDecide drives the whole pipeline with arbitrary configs and tool
// definitions: it never panics, and its answers stay consistent.
func FuzzDecide(f *testing.F) {
	for _, c := range loadCases(f) {
		tool := `{"name":"t","annotations":{"readOnlyHint":true,"destructiveHint":false}}`
		f.Add(c.Config, "srv", tool, false)
	}
	f.Add("[mcp_servers.srv]\nurl=\"x\"\nconnectors=true\n", "srv", `{"name":"t","_meta":{"connector_id":"srv"}}`, true)
	f.Fuzz(func(t *testing.T, cfgText, server, toolJSON string, drifted bool) {
		cfg, err := config.LoadBytes("fuzz.toml", []byte(cfgText))
		if err != nil {
			return
		}
		rules, err := policy.Compile(cfg)
		if err != nil {
			return
		}
		tool, err := hints.ParseTool([]byte(toolJSON))
		if err != nil {
			return
		}
		in := policy.Input{Server: server, Tool: tool, Drifted: drifted}
		d := rules.Decide(context.Background(), &in)
		visible, _ := rules.Visible(server, tool, drifted)
		if visible == d.Hidden {
			t.Fatalf("Visible=%v but Hidden=%v", visible, d.Hidden)
		}
		if d.Hidden && d.Decision != policy.Deny {
			t.Fatalf("hidden tool decided %s", d.Decision)
		}
		if (d.Decision == policy.Ask) != (d.Prompt != nil) {
			t.Fatalf("decision %s with prompt %v", d.Decision, d.Prompt)
		}
		if d.Decision != policy.Ask && d.Rememberable {
			t.Fatal("a non-ask is marked rememberable")
		}
		if len(d.Reasons) == 0 {
			t.Fatal("decision without a reason")
		}
	})
}
