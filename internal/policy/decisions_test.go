package policy_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// decisionCase is one row of testdata/decisions.toml.
type decisionCase struct {
	Name        string         `toml:"name"`
	Config      string         `toml:"config"`
	Server      string         `toml:"server"`
	Tool        string         `toml:"tool"`
	Title       string         `toml:"title"`
	Annotations map[string]any `toml:"annotations"`
	Meta        map[string]any `toml:"meta"`
	// DriftFrom, when set, is the annotations of an earlier definition of
	// the same tool, pinned first in the session.
	DriftFrom map[string]any `toml:"drift_from"`
	// Remembered puts a session approval for the definition seen first
	// (the drift_from one when set) before the call.
	Remembered bool     `toml:"remembered"`
	Labels     []string `toml:"labels"`

	// CodexTest names the Codex unit test a case translates,
	// "<codex-rs path>::<test name>"; CodexDiffers, when set, says why the
	// expectation deliberately differs from Codex's (docs/configuration.md
	// lists every such difference).
	CodexTest    string `toml:"codex_test"`
	CodexDiffers string `toml:"codex_differs"`

	Expect       string `toml:"expect"`
	Code         string `toml:"code"`
	Rememberable *bool  `toml:"rememberable"`
	Hidden       *bool  `toml:"hidden"`
	App          string `toml:"app"`
}

func loadCases(t testing.TB) []decisionCase {
	t.Helper()
	var f struct {
		Case []decisionCase `toml:"case"`
	}
	md, err := toml.DecodeFile("testdata/decisions.toml", &f)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		t.Fatalf("testdata/decisions.toml: unknown keys %v", u)
	}
	return f.Case
}

func makeTool(t testing.TB, c *decisionCase, annotations map[string]any) *hints.Tool {
	t.Helper()
	def := map[string]any{
		"name":        c.Tool,
		"description": "tool " + c.Tool,
		"inputSchema": map[string]any{"type": "object"},
	}
	if c.Title != "" {
		def["title"] = c.Title
	}
	if annotations != nil {
		def["annotations"] = annotations
	}
	if c.Meta != nil {
		def["_meta"] = c.Meta
	}
	raw, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := hints.ParseTool(raw)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// TestDecisionTable runs every case of testdata/decisions.toml: Codex's truth
// tables, spec defaults, visibility order, trust, drift and approval_policy.
func TestDecisionTable(t *testing.T) {
	t.Parallel()
	cases := loadCases(t)
	if len(cases) < 40 {
		t.Fatalf("only %d cases loaded", len(cases))
	}
	for _, c := range cases {
		c := c
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			if c.Server == "" {
				c.Server = "srv"
			}
			if c.Tool == "" {
				c.Tool = "t"
			}
			cfg, err := config.LoadBytes("case.toml", []byte(c.Config))
			if err != nil {
				t.Fatalf("config: %v", err)
			}
			rules, err := policy.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			tool := makeTool(t, &c, c.Annotations)
			s := session.NewStore(nil).Get("s")
			first := tool
			if c.DriftFrom != nil {
				first = makeTool(t, &c, c.DriftFrom)
				if first.HashHex == tool.HashHex {
					t.Fatal("drift_from must differ from annotations")
				}
			}
			s.Pin(c.Server, first.Name, first.HashHex)
			if c.Remembered {
				app, conn := rules.Identity(c.Server, first)
				s.Remember(session.ApprovalKey{App: app, Server: c.Server, Connector: conn, Tool: first.Name, Hash: first.HashHex})
			}
			drifted := s.Pin(c.Server, tool.Name, tool.HashHex)
			if drifted != (c.DriftFrom != nil) {
				t.Fatalf("drifted = %v", drifted)
			}
			s.AddLabels(c.Labels...)
			d := rules.Decide(context.Background(), &policy.Input{
				Session: "s", Server: c.Server, Tool: tool, Arguments: json.RawMessage(`{}`),
				Labels: s.Labels(), Drifted: drifted, Approvals: s,
			})
			if got := d.Decision.String(); got != c.Expect {
				t.Errorf("decision = %s, want %s\nreasons: %+v\ntrace: %+v", got, c.Expect, d.Reasons, d.Trace)
			}
			if c.Code != "" && !hasCode(d, c.Code) {
				t.Errorf("reasons %+v lack code %q", d.Reasons, c.Code)
			}
			if c.Rememberable != nil && d.Rememberable != *c.Rememberable {
				t.Errorf("rememberable = %v, want %v", d.Rememberable, *c.Rememberable)
			}
			if c.Hidden != nil && d.Hidden != *c.Hidden {
				t.Errorf("hidden = %v, want %v", d.Hidden, *c.Hidden)
			}
			if c.App != "" && d.App != c.App {
				t.Errorf("app = %q, want %q", d.App, c.App)
			}
			visible, _ := rules.Visible(c.Server, tool, drifted)
			if visible == d.Hidden {
				t.Errorf("Visible = %v disagrees with Decide's hidden = %v", visible, d.Hidden)
			}
			if d.Decision == policy.Ask && d.Prompt == nil {
				t.Error("an ask has no prompt")
			}
			if len(d.Trace) == 0 || d.Trace[len(d.Trace)-1].Step != policy.StepDecision {
				t.Errorf("trace does not end with the decision: %+v", d.Trace)
			}
		})
	}
}

func hasCode(d policy.Decision, code string) bool {
	for _, r := range d.Reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}
