package policy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// TestCodexCorpusNamesItsOrigin checks the translated Codex tests in
// testdata/decisions.toml: each names a Codex test file and test, and the
// corpus covers the four files the policy mirrors.
func TestCodexCorpusNamesItsOrigin(t *testing.T) {
	t.Parallel()
	origin := regexp.MustCompile(`^codex-rs/[a-z0-9_/-]+\.rs::[a-z0-9_]+$`)
	files := map[string]int{}
	for _, c := range loadCases(t) {
		if c.CodexTest == "" {
			continue
		}
		if !origin.MatchString(c.CodexTest) {
			t.Errorf("%s: codex_test %q is not <codex-rs path>::<test name>", c.Name, c.CodexTest)
			continue
		}
		files[strings.SplitN(c.CodexTest, "::", 2)[0]]++
	}
	for _, f := range []string{
		"codex-rs/connectors/src/app_tool_policy_tests.rs",
		"codex-rs/core/src/mcp_tool_call_tests.rs",
		"codex-rs/codex-mcp/src/mcp/mod_tests.rs",
		"codex-rs/codex-mcp/src/connection_manager_tests.rs",
	} {
		if files[f] == 0 {
			t.Errorf("no case translates a test of %s", f)
		}
	}
}

// genConfig builds a random config from Codex's keys and toolwarden's
// stricter additions (trust, read_only, connectors), as a TOML tree.
func genConfig(r *rand.Rand) map[string]any {
	pick := func(vs ...any) any { return vs[r.Intn(len(vs))] }
	maybe := func(m map[string]any, k string, vs ...any) {
		if r.Intn(3) == 0 {
			m[k] = pick(vs...)
		}
	}
	modes := []any{"auto", "prompt", "writes", "approve"}
	cfg := map[string]any{}
	switch r.Intn(6) {
	case 0:
		cfg["approval_policy"] = "never"
	case 1:
		cfg["approval_policy"] = pick("on-request", "untrusted", "on-failure")
	case 2:
		cfg["approval_policy"] = map[string]any{"granular": map[string]any{
			"sandbox_approval": true, "rules": true, "mcp_elicitations": r.Intn(2) == 0}}
	}
	maybe(cfg, "sandbox_mode", "read-only", "workspace-write", "danger-full-access")
	if r.Intn(5) == 0 {
		cfg["profile"] = "p"
		prof := map[string]any{}
		maybe(prof, "approval_policy", "never", "on-request")
		maybe(prof, "sandbox_mode", "read-only", "danger-full-access")
		cfg["profiles"] = map[string]any{"p": prof}
	}

	apps := map[string]any{}
	if r.Intn(2) == 0 {
		def := map[string]any{}
		maybe(def, "enabled", true, false)
		maybe(def, "destructive_enabled", true, false)
		maybe(def, "open_world_enabled", true, false)
		maybe(def, "default_tools_approval_mode", modes...)
		maybe(def, "trust", "full", "pinned", "none")
		apps["_default"] = def
	}
	for _, id := range []string{"srv", "apps", "calendar", "drive"} {
		if r.Intn(2) == 0 {
			continue
		}
		a := map[string]any{}
		maybe(a, "enabled", true, false)
		maybe(a, "destructive_enabled", true, false)
		maybe(a, "open_world_enabled", true, false)
		maybe(a, "default_tools_enabled", true, false)
		maybe(a, "default_tools_approval_mode", modes...)
		maybe(a, "read_only", true, false)
		maybe(a, "trust", "full", "pinned", "none")
		if r.Intn(2) == 0 {
			tools := map[string]any{}
			for _, tn := range []string{"t", "T Title"} {
				if r.Intn(2) == 0 {
					tc := map[string]any{}
					maybe(tc, "enabled", true, false)
					maybe(tc, "approval_mode", modes...)
					tools[tn] = tc
				}
			}
			a["tools"] = tools
		}
		apps[id] = a
	}
	if len(apps) > 0 {
		cfg["apps"] = apps
	}

	srv := map[string]any{"command": "srv"}
	maybe(srv, "enabled", true, false)
	maybe(srv, "enabled_tools", []string{"t"}, []string{"u"}, []string{})
	maybe(srv, "disabled_tools", []string{"t"}, []string{"u"})
	maybe(srv, "default_tools_approval_mode", modes...)
	maybe(srv, "trust", "full", "pinned", "none")
	if r.Intn(2) == 0 {
		srv["tools"] = map[string]any{"t": map[string]any{"approval_mode": pick(modes...)}}
	}
	aggr := map[string]any{"url": "https://example.invalid/mcp", "connectors": true}
	maybe(aggr, "default_tools_approval_mode", modes...)
	maybe(aggr, "disabled_tools", []string{"t"})
	cfg["mcp_servers"] = map[string]any{"srv": srv, "apps": aggr}
	return cfg
}

// genTool builds a random definition: annotations, _meta hints that try to
// relax them, a title, a connector id.
func genTool(r *rand.Rand, connectors []string) (oracleTool, map[string]any) {
	tri := func() *bool {
		switch r.Intn(3) {
		case 0:
			return nil
		case 1:
			b := true
			return &b
		}
		b := false
		return &b
	}
	t := oracleTool{name: []string{"t", "u"}[r.Intn(2)], readOnly: tri(), destructive: tri(), openWorld: tri()}
	if r.Intn(2) == 0 {
		t.title = "T Title"
	}
	t.connector = connectors[r.Intn(len(connectors))]
	def := map[string]any{"name": t.name, "description": "d", "inputSchema": map[string]any{"type": "object"}}
	if t.title != "" {
		def["title"] = t.title
	}
	ann := map[string]any{}
	for k, v := range map[string]*bool{"readOnlyHint": t.readOnly, "destructiveHint": t.destructive, "openWorldHint": t.openWorld} {
		if v != nil {
			ann[k] = *v
		}
	}
	if len(ann) > 0 || r.Intn(2) == 0 {
		def["annotations"] = ann
	}
	meta := map[string]any{}
	if t.connector != "" {
		meta["connector_id"] = t.connector
	}
	// Namespaced hints that would relax policy if believed.
	if r.Intn(3) == 0 {
		meta["x/readOnlyHint"] = true
	}
	if r.Intn(3) == 0 {
		meta["x/destructiveHint"] = false
	}
	if r.Intn(3) == 0 {
		meta["x/openWorldHint"] = false
	}
	if len(meta) > 0 {
		def["_meta"] = meta
	}
	return t, def
}

// call is one generated call and toolwarden's decision for it.
type call struct {
	server     string
	tool       oracleTool
	remembered bool
	drifted    bool
}

func decide(t *testing.T, rules *policy.Rules, c call, def map[string]any) policy.Decision {
	t.Helper()
	raw, err := json.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := hints.ParseTool(raw)
	if err != nil {
		t.Fatal(err)
	}
	s := session.NewStore(nil).Get("s")
	first := tool
	if c.drifted {
		// An earlier definition, pinned first: the call is a drift.
		other := map[string]any{}
		for k, v := range def {
			other[k] = v
		}
		other["description"] = "an earlier description"
		raw, _ := json.Marshal(other)
		if first, err = hints.ParseTool(raw); err != nil {
			t.Fatal(err)
		}
	}
	s.Pin(c.server, first.Name, first.HashHex)
	if c.remembered {
		app, conn := rules.Identity(c.server, tool)
		s.Remember(session.ApprovalKey{App: app, Server: c.server, Connector: conn, Tool: tool.Name, Hash: tool.HashHex})
	}
	drifted := s.Pin(c.server, tool.Name, tool.HashHex)
	return rules.Decide(context.Background(), &policy.Input{
		Session: "s", Server: c.server, Tool: tool, Arguments: json.RawMessage(`{}`),
		Drifted: drifted, Approvals: s,
	})
}

// checkNeverLooser compares toolwarden's decision with Codex's for one call.
func checkNeverLooser(t *testing.T, where string, cfg map[string]any, rules *policy.Rules, c call, def map[string]any) (specDifference bool) {
	t.Helper()
	d := decide(t, rules, c, def)
	cx := codexDecide(cfg, c.server, c.tool, c.remembered && !c.drifted, true)
	strict := codexDecide(cfg, c.server, c.tool, c.remembered && !c.drifted, false)
	fail := func(what string) {
		t.Errorf("%s: %s\ncall: server=%s tool=%+v ro=%v de=%v ow=%v remembered=%v drifted=%v\ndefinition: %v\ntoolwarden: %s hidden=%v rememberable=%v reasons=%+v\ncodex: %+v\ntrace: %+v",
			where, what, c.server, c.tool, ptr(c.tool.readOnly), ptr(c.tool.destructive), ptr(c.tool.openWorld), c.remembered, c.drifted,
			def, d.Decision, d.Hidden, d.Rememberable, d.Reasons, cx, d.Trace)
	}
	switch {
	case cx.hidden && !d.Hidden:
		fail("shows a tool Codex hides")
	case !d.Hidden && d.Decision == policy.Allow && cx.verdict != "allow":
		fail("allows what Codex " + cx.verdict + "s")
	case !d.Hidden && d.Decision == policy.Ask && cx.verdict == "deny":
		fail("asks where Codex denies")
	case !d.Hidden && d.Decision == policy.Ask && d.Rememberable && cx.verdict == "ask" && !cx.rememberable:
		fail("offers to remember an ask Codex does not let remember")
	}
	return strict.hidden && !cx.hidden
}

func ptr(p *bool) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// TestNeverLooserThanCodex is the class test: for thousands of random
// configs (Codex's keys plus toolwarden's stricter ones) and tool
// definitions, toolwarden never shows a tool Codex hides, never allows what
// Codex asks about or denies, and never offers to remember an ask Codex
// would not. The one exception is the documented MCP-spec rule (a tool
// with readOnlyHint true and no destructiveHint is not destructive).
func TestNeverLooserThanCodex(t *testing.T) {
	t.Parallel()
	n := 2500
	if testing.Short() {
		n = 500
	}
	r := rand.New(rand.NewSource(20261126))
	var spec, allows, asks, hidden int
	for i := 0; i < n; i++ {
		cfg := genConfig(r)
		var buf bytes.Buffer
		if err := toml.NewEncoder(&buf).Encode(cfg); err != nil {
			t.Fatal(err)
		}
		loaded, err := config.LoadBytes("gen.toml", buf.Bytes())
		if err != nil {
			t.Fatalf("generated config %d does not load: %v\n%s", i, err, buf.String())
		}
		rules, err := policy.Compile(loaded)
		if err != nil {
			t.Fatal(err)
		}
		server := []string{"srv", "apps"}[r.Intn(2)]
		tool, def := genTool(r, []string{"", "calendar", "drive"})
		c := call{server: server, tool: tool, remembered: r.Intn(4) == 0, drifted: r.Intn(5) == 0}
		if checkNeverLooser(t, fmt.Sprintf("config %d:\n%s", i, buf.String()), cfg, rules, c, def) {
			spec++
		}
		switch d := decide(t, rules, c, def); {
		case d.Hidden:
			hidden++
		case d.Decision == policy.Allow:
			allows++
		case d.Decision == policy.Ask:
			asks++
		}
		if t.Failed() {
			return
		}
	}
	// The generator must reach every outcome, or the test proves little.
	if allows == 0 || asks == 0 || hidden == 0 || (spec == 0 && !testing.Short()) {
		t.Errorf("outcomes: %d allow, %d ask, %d hidden, %d spec differences; want each > 0", allows, asks, hidden, spec)
	}
}

// TestRealCodexConfigsNeverLooser loads real Codex config files and checks
// every configured server and app against the oracle with every shape of
// annotations.
func TestRealCodexConfigsNeverLooser(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/codex/*.toml")
	files = append(files, "../config/testdata/codex-full.toml")
	if len(files) < 3 {
		t.Fatalf("only %d real configs", len(files))
	}
	for _, file := range files {
		file := file
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			var cfg map[string]any
			if _, err := toml.DecodeFile(file, &cfg); err != nil {
				t.Fatal(err)
			}
			loaded, err := config.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			rules, err := policy.Compile(loaded)
			if err != nil {
				t.Fatal(err)
			}
			connectors := []string{""}
			for id := range table(cfg, "apps") {
				if id != "_default" {
					connectors = append(connectors, id)
				}
			}
			var names []string
			for name, s := range table(cfg, "mcp_servers") {
				names = append(names, name)
				for tn := range table(s.(map[string]any), "tools") {
					names = append(names, name+"\x00"+tn)
				}
			}
			tri := []*bool{nil, boolp(true), boolp(false)}
			for _, n := range names {
				server, toolName, _ := strings.Cut(n, "\x00")
				if toolName == "" {
					toolName = "some_tool"
				}
				for _, conn := range connectors {
					for _, ro := range tri {
						for _, de := range tri {
							for _, ow := range tri {
								ot := oracleTool{name: toolName, connector: conn, readOnly: ro, destructive: de, openWorld: ow}
								def := map[string]any{"name": toolName, "description": "d", "inputSchema": map[string]any{"type": "object"}}
								ann := map[string]any{}
								for k, v := range map[string]*bool{"readOnlyHint": ro, "destructiveHint": de, "openWorldHint": ow} {
									if v != nil {
										ann[k] = *v
									}
								}
								def["annotations"] = ann
								if conn != "" {
									def["_meta"] = map[string]any{"connector_id": conn}
								}
								checkNeverLooser(t, file, cfg, rules, call{server: server, tool: ot}, def)
							}
						}
					}
				}
			}
		})
	}
}

func boolp(b bool) *bool { return &b }

// The oracle must itself agree with Codex's tests: the translated cases
// with no codex_differs are Codex's expectations, so the oracle (without
// the spec exemption) must reproduce them where it models the inputs.
func TestOracleAgreesWithTranslatedCodexTests(t *testing.T) {
	t.Parallel()
	for _, c := range loadCases(t) {
		if c.CodexTest == "" || c.CodexDiffers != "" || c.DriftFrom != nil || c.Remembered {
			continue
		}
		var cfg map[string]any
		if _, err := toml.Decode(c.Config, &cfg); err != nil {
			t.Fatal(err)
		}
		if c.Server == "" {
			c.Server = "srv"
		}
		if c.Tool == "" {
			c.Tool = "t"
		}
		ot := oracleTool{name: c.Tool, title: c.Title}
		if id, ok := c.Meta["connector_id"].(string); ok {
			ot.connector = id
		}
		get := func(k string) *bool {
			if v, ok := c.Annotations[k].(bool); ok {
				return &v
			}
			return nil
		}
		ot.readOnly, ot.destructive, ot.openWorld = get("readOnlyHint"), get("destructiveHint"), get("openWorldHint")
		got := codexDecide(cfg, c.Server, ot, false, false)
		want := c.Expect
		if c.Hidden != nil && *c.Hidden {
			if !got.hidden {
				t.Errorf("%s: oracle shows the tool; Codex's test hides it", c.Name)
			}
			continue
		}
		if got.hidden || got.verdict != want {
			t.Errorf("%s: oracle says %+v, Codex's test says %s", c.Name, got, want)
		}
		if c.Rememberable != nil && got.verdict == "ask" && got.rememberable != *c.Rememberable {
			t.Errorf("%s: oracle rememberable = %v, want %v", c.Name, got.rememberable, *c.Rememberable)
		}
	}
}

// TestDecisionModeIsTheDecidingOne: when Codex's mode decides (toolwarden's
// own would allow), the decision, the trace and what plugins see name
// Codex's mode and where it is written, not the one that lost.
func TestDecisionModeIsTheDecidingOne(t *testing.T) {
	t.Parallel()
	cfg, err := config.LoadBytes("c.toml", []byte("[apps.srv]\ndefault_tools_approval_mode = \"approve\"\n[mcp_servers.srv]\ncommand = \"srv\"\ndefault_tools_approval_mode = \"prompt\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := policy.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tool, _ := hints.ParseTool([]byte(`{"name":"t","annotations":{"readOnlyHint":true}}`))
	var seen config.Mode
	d := rules.Decide(context.Background(), &policy.Input{Server: "srv", Tool: tool, Arguments: json.RawMessage(`{}`),
		Plugins: []policy.Checker{modeSpy{&seen}}})
	if d.Decision != policy.Ask || d.Mode != config.ModePrompt || seen != config.ModePrompt {
		t.Errorf("decision %s mode %q (plugin saw %q), want ask in mode prompt", d.Decision, d.Mode, seen)
	}
	for _, st := range d.Trace {
		if st.Step == policy.StepApprovalMode && st.Source != "mcp_servers.srv.default_tools_approval_mode" {
			t.Errorf("approval_mode step names %q", st.Source)
		}
	}
}

type modeSpy struct{ seen *config.Mode }

func (m modeSpy) Name() string                  { return "spy" }
func (m modeSpy) Matches(app, tool string) bool { return true }
func (m modeSpy) CanApprove() bool              { return false }
func (m modeSpy) Check(_ context.Context, in *policy.CheckInput) policy.PluginVerdict {
	*m.seen = in.Mode
	return policy.PluginVerdict{Verdict: policy.Abstain}
}
