package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/catalog"
	"github.com/toolwarden/toolwarden/internal/hook"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/session"
)

// Two definitions as server-filesystem lists them (annotations included).
const (
	fsReadDef  = `{"name":"read_text_file","title":"Read Text File","description":"Read the complete contents of a file from the file system as text.","inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`
	fsWriteDef = `{"name":"write_file","title":"Write File","description":"Create a new file or completely overwrite an existing file with new content.","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]},"annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":false}}`
)

// fsServer is how each agent's user config runs server "fs" in these
// tests: the filesystem server over the project of the events.
const fsServer = `{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/home/me/src"]}`

// writeAgentConfigs names server "fs" in the user config of every agent.
func writeAgentConfigs(t *testing.T, home string) {
	t.Helper()
	writeTestFile(t, filepath.Join(home, ".claude.json"), `{"mcpServers":{"fs":`+fsServer+`}}`)
	writeTestFile(t, filepath.Join(home, ".gemini", "settings.json"), `{"mcpServers":{"fs":`+fsServer+`}}`)
	writeTestFile(t, filepath.Join(home, ".codex", "config.toml"), "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/home/me/src\"]\n")
}

// identities are the servers the agents run as "fs" for an event in
// project, as a hook with env resolves them (each agent starts a server
// with an environment of its own, so each has its own identity).
func (h *hookRun) identities() []serverspec.Identity {
	h.t.Helper()
	p := hook.Places{Home: h.home, Project: h.project, Getenv: func(k string) string { return h.env()[k] }, Environ: os.Environ()}
	var out []serverspec.Identity
	for _, a := range []hook.Agent{hook.Claude, hook.Gemini, hook.Codex} {
		r := p.Resolve(a, "fs")
		if r.Outcome != hook.Runs {
			h.t.Fatalf("%s does not run fs: %s", a, r.Why)
		}
		out = append(out, r.Server.Spec.Identity())
	}
	return out
}

// put writes the catalog entry of every agent's "fs".
func (h *hookRun) put(listedAt time.Time, defs ...string) {
	h.t.Helper()
	for _, id := range h.identities() {
		putCatalogOf(h.t, h.catalog, id, listedAt, defs...)
	}
}

func putCatalogOf(t *testing.T, dir string, id serverspec.Identity, listedAt time.Time, defs ...string) {
	t.Helper()
	var tools []json.RawMessage
	for _, d := range defs {
		tools = append(tools, json.RawMessage(d))
	}
	if err := catalog.Write(dir, &catalog.Entry{Server: "fs", Identity: id, Source: "test", ListedAt: listedAt, Tools: tools}); err != nil {
		t.Fatal(err)
	}
}

// The payloads each agent sends for an MCP tool of server "fs", as
// documented by the agents (docs/hooks.md).
func agentEvent(agent, tool, session string) string {
	switch agent {
	case "gemini":
		return `{"session_id":"` + session + `","transcript_path":"/home/me/.gemini/tmp/abc/chats/session.json","cwd":"/home/me/src","hook_event_name":"BeforeTool","timestamp":"2026-11-26T09:00:00.000Z","tool_name":"mcp_fs_` + tool + `","tool_input":{"path":"/home/me/src/a.txt","content":"x"},"mcp_context":{"server_name":"fs","tool_name":"` + tool + `","command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/home/me/src"]}}`
	case "codex":
		return `{"session_id":"` + session + `","transcript_path":"/home/me/.codex/sessions/2026/11/26/rollout.jsonl","cwd":"/home/me/src","hook_event_name":"PreToolUse","model":"gpt-5-codex","permission_mode":"default","tool_name":"mcp__fs__` + tool + `","tool_input":{"path":"/home/me/src/a.txt","content":"x"},"tool_use_id":"call_1"}`
	}
	return `{"session_id":"` + session + `","transcript_path":"/home/me/.claude/projects/-home-me-src/` + session + `.jsonl","cwd":"/home/me/src","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"mcp__fs__` + tool + `","tool_input":{"path":"/home/me/src/a.txt","content":"x"}}`
}

// verdict reads an agent's answer as allow, ask or deny (Codex's allow is
// no output at all: Codex's own flow runs).
func verdict(t *testing.T, agent, out string) string {
	t.Helper()
	switch agent {
	case "gemini":
		var v struct{ Decision string }
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("gemini answer %q: %v", out, err)
		}
		return v.Decision
	case "codex":
		if out == "" {
			return "allow"
		}
	}
	return permission(t, out)
}

type hookRun struct {
	t                         *testing.T
	catalog, state, approvals string
	home, project             string
	vars                      map[string]string // more of the hook's environment
}

func newHookRun(t *testing.T) *hookRun {
	d := t.TempDir()
	h := &hookRun{t: t, catalog: filepath.Join(d, "catalog"), state: filepath.Join(d, "state"), approvals: filepath.Join(d, "approvals.json"),
		home: filepath.Join(d, "home"), project: "/home/me/src", vars: map[string]string{}}
	writeAgentConfigs(t, h.home)
	return h
}

// env is the hook's environment: the catalog, the agents' home, and vars.
func (h *hookRun) env() map[string]string {
	e := map[string]string{catalogEnv: h.catalog, "HOME": h.home, "PATH": os.Getenv("PATH")}
	for k, v := range h.vars {
		e[k] = v
	}
	return e
}

func (h *hookRun) decide(agent, tool, session string) (string, string, string) {
	h.t.Helper()
	code, out, stderr := runCLIEnv(h.t, h.env(), agentEvent(agent, tool, session),
		"hook", "--agent", agent, "--state-dir", h.state, "--approvals", h.approvals)
	if code != exitOK {
		h.t.Fatalf("%s %s: exit %d %s %s", agent, tool, code, out, stderr)
	}
	return verdict(h.t, agent, out), out, stderr
}

func TestHookDecidesReadsWithoutAskingFromTheCatalog(t *testing.T) {
	t.Parallel()
	cases := []struct{ agent, write string }{
		{"claude", "ask"},
		{"gemini", "deny"}, // Gemini's BeforeTool cannot ask
		{"codex", "deny"},  // nor can Codex's PreToolUse
	}
	for _, c := range cases {
		t.Run(c.agent, func(t *testing.T) {
			t.Parallel()
			h := newHookRun(t)
			// Without the catalog the read is asked like any unknown tool.
			if v, out, _ := h.decide(c.agent, "read_text_file", "s0"); v == "allow" || !strings.Contains(out, "toolwarden tools sync") {
				t.Fatalf("read without a catalog: %s %s", v, out)
			}
			h.put(time.Now(), fsReadDef, fsWriteDef)
			if v, out, _ := h.decide(c.agent, "read_text_file", "s1"); v != "allow" {
				t.Fatalf("read: %s %s", v, out)
			}
			if v, out, _ := h.decide(c.agent, "write_file", "s1"); v != c.write {
				t.Fatalf("write: %s %s", v, out)
			}
		})
	}
}

// Gemini CLI 0.61 names MCP tools mcp_<server>_<tool>; without mcp_context
// the server is the one Gemini's settings.json configures (gemininame.go).
func TestHookSeesGeminisToolNamesWithoutMCPContext(t *testing.T) {
	t.Parallel()
	h := newHookRun(t)
	writeTestFile(t, filepath.Join(h.home, ".gemini", "settings.json"), `{"mcpServers":{"fs":{"command":"srv-fs"},"git_hub":{"command":"other"}}}`)
	h.project = "/home/me"
	h.put(time.Now(), fsReadDef)
	ev := `{"session_id":"g","cwd":"/home/me","hook_event_name":"BeforeTool","timestamp":"2026-11-26T09:00:00.000Z","tool_name":"mcp_fs_read_text_file","tool_input":{"path":"/home/me/a"}}`
	code, out, _ := runCLIEnv(t, h.env(), ev, "hook", "--agent", "gemini", "--state-dir", h.state, "--approvals", h.approvals)
	if code != exitOK || verdict(t, "gemini", out) != "allow" {
		t.Fatalf("exit %d %s", code, out)
	}
}

// A definition that changes in the catalog after a session pinned it is
// drift, as in the proxy: its relaxing hints are not believed.
func TestHookTreatsACatalogChangeAsDrift(t *testing.T) {
	t.Parallel()
	h := newHookRun(t)
	h.put(time.Now(), fsReadDef)
	if v, out, _ := h.decide("claude", "read_text_file", "s1"); v != "allow" {
		t.Fatalf("before: %s", out)
	}
	changed := strings.Replace(fsReadDef, "Read the complete contents", "Read and upload the contents", 1)
	h.put(time.Now(), changed)
	v, out, _ := h.decide("claude", "read_text_file", "s1")
	if v != "ask" || !strings.Contains(out, "drift") {
		t.Fatalf("after the change: %s %s", v, out)
	}
	// Going back to the name alone (the catalog gone) is no way around it.
	os.RemoveAll(h.catalog)
	if v, _, _ := h.decide("claude", "read_text_file", "s1"); v != "ask" {
		t.Fatalf("without the catalog: %s", v)
	}
	// A new session pins what it first sees.
	h.put(time.Now(), changed)
	if v, out, _ := h.decide("claude", "read_text_file", "s2"); v != "allow" {
		t.Fatalf("a new session: %s", out)
	}
}

// A session that met a tool before the catalog listed it pinned only its
// name; the listed definition then takes that pin's place (it is what
// toolwarden learned, not what the server changed) instead of counting
// as drift for the rest of the session.
func TestHookAdoptsTheListedDefinitionOfAToolKnownByNameAlone(t *testing.T) {
	t.Parallel()
	h := newHookRun(t)
	if v, _, _ := h.decide("claude", "read_text_file", "s1"); v != "ask" {
		t.Fatalf("unknown tool: %s", v)
	}
	h.put(time.Now(), fsReadDef)
	if v, out, _ := h.decide("claude", "read_text_file", "s1"); v != "allow" {
		t.Fatalf("after sync: %s", out)
	}
}

func TestACorruptCatalogNeverGrantsMore(t *testing.T) {
	t.Parallel()
	for name, data := range map[string]string{
		"truncated":          `{"version":2,"server":"fs","identity":{"command":"npx"},"listed_at":"2026-11-26T09:00:00Z","tools":[` + fsReadDef,
		"another version":    `{"version":9,"server":"fs","identity":{"command":"npx"},"listed_at":"2026-11-26T09:00:00Z","tools":[` + fsReadDef + `]}`,
		"another server's":   `{"version":2,"server":"github","identity":{"command":"npx"},"listed_at":"2026-11-26T09:00:00Z","tools":[` + fsReadDef + `]}`,
		"another identity's": `{"version":2,"server":"fs","identity":{"command":"npx"},"listed_at":"2026-11-26T09:00:00Z","tools":[` + fsReadDef + `]}`,
		"tools not objects":  `{"version":2,"server":"fs","identity":{"command":"npx"},"listed_at":"2026-11-26T09:00:00Z","tools":["read_text_file"]}`,
		"an empty file":      ``,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHookRun(t)
			os.MkdirAll(h.catalog, 0o700)
			if err := os.WriteFile(filepath.Join(h.catalog, catalog.FileName("fs", h.identities()[0])), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			v, out, stderr := h.decide("claude", "read_text_file", "s1")
			if v != "ask" || !strings.Contains(out, "cannot be read") || !strings.Contains(stderr, "warning") {
				t.Fatalf("%s\n%s", out, stderr)
			}
		})
	}
}

func TestHookSaysHowOldAnOldCatalogEntryIs(t *testing.T) {
	t.Parallel()
	h := newHookRun(t)
	h.put(time.Now().Add(-30*24*time.Hour), fsReadDef)
	v, out, _ := h.decide("claude", "read_text_file", "s1")
	if v != "allow" || !strings.Contains(out, "ago") || !strings.Contains(out, "tools sync") {
		t.Fatalf("%s %s", v, out)
	}
}

// An "always" approval given through wrap (the approvals file) lets the
// same call through a hook, for the exact definition it was given for.
func TestHookHonorsAlwaysApprovalsFromTheApprovalsFile(t *testing.T) {
	t.Parallel()
	for _, agent := range []string{"claude", "gemini", "codex"} {
		t.Run(agent, func(t *testing.T) {
			t.Parallel()
			h := newHookRun(t)
			h.put(time.Now(), fsWriteDef)
			if v, _, _ := h.decide(agent, "write_file", "s1"); v == "allow" {
				t.Fatal("write allowed before any approval")
			}
			tool, err := host.ParseTool([]byte(fsWriteDef))
			if err != nil {
				t.Fatal(err)
			}
			p, _ := session.OpenPersistent(h.approvals)
			if err := p.Add(session.ApprovalKey{App: "fs", Server: "fs", Tool: "write_file", Hash: tool.HashHex}, time.Now()); err != nil {
				t.Fatal(err)
			}
			if v, out, _ := h.decide(agent, "write_file", "s2"); v != "allow" {
				t.Fatalf("with the approval: %s %s", v, out)
			}
			// Not for another definition of the tool.
			h.put(time.Now(), strings.Replace(fsWriteDef, "Create a new file", "Create or delete a file", 1))
			if v, _, _ := h.decide(agent, "write_file", "s3"); v == "allow" {
				t.Fatal("the approval covered another definition")
			}
		})
	}
}

func TestHookReadsTheApprovalsFileWrapWrites(t *testing.T) {
	t.Parallel()
	want, err := defaultApprovalsPath()
	if err != nil {
		t.Skip(err)
	}
	if got := hookApprovalsPath(&env{getenv: func(string) string { return "" }}, ""); got != want {
		t.Fatalf("hook reads %q, wrap writes %q", got, want)
	}
}

// A drifted tool is asked about until a human approves it, as in the
// proxy: Claude Code's PostToolUse after an ask shows the user said yes in
// its dialog, which accepts the new definition. A mode where Claude Code
// asks no one, or an agent whose hook cannot ask, proves nothing.
func TestHookAcceptsADriftedDefinitionOnceClaudeCodesUserApprovedIt(t *testing.T) {
	t.Parallel()
	after := func(agent, mode string) string {
		ev := agentEvent(agent, "read_text_file", "s1")
		ev = strings.Replace(ev, `"PreToolUse"`, `"PostToolUse"`, 1)
		ev = strings.Replace(ev, `"BeforeTool"`, `"AfterTool"`, 1)
		ev = strings.Replace(ev, `"permission_mode":"default"`, `"permission_mode":"`+mode+`"`, 1)
		return strings.Replace(ev, `"tool_input"`, `"tool_response":"text","tool_input"`, 1)
	}
	cases := []struct {
		name, agent, mode string
		accepted          bool
	}{
		{"Claude Code in default mode", "claude", "default", true},
		{"Claude Code in bypassPermissions mode", "claude", "bypassPermissions", false},
		{"Claude Code without a mode", "claude", "", false},
		{"Gemini CLI", "gemini", "default", false},
		{"Codex", "codex", "default", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHookRun(t)
			h.put(time.Now(), fsReadDef)
			h.decide(c.agent, "read_text_file", "s1")
			h.put(time.Now(), strings.Replace(fsReadDef, "Read the complete", "Read and send the complete", 1))
			if v, _, _ := h.decide(c.agent, "read_text_file", "s1"); v == "allow" {
				t.Fatal("drift allowed")
			}
			ev := after(c.agent, c.mode)
			if c.mode == "" {
				ev = strings.Replace(ev, `"permission_mode":"","`, `"`, 1)
			}
			code, out, stderr := runCLIEnv(t, h.env(), ev, "hook", "--agent", c.agent, "--state-dir", h.state, "--approvals", h.approvals)
			if code != exitOK || out != "" {
				t.Fatalf("after-event: exit %d %q %s", code, out, stderr)
			}
			v, _, _ := h.decide(c.agent, "read_text_file", "s1")
			if (v == "allow") != c.accepted {
				t.Fatalf("after the after-event: %s, accepted want %v", v, c.accepted)
			}
		})
	}
}

// A server the agent runs through this very toolwarden's wrap is the
// server wrap runs, so the entry wrap wrote for it counts; a file merely
// named toolwarden may run anything, so it is judged as itself and the
// wrapped server's entry is not lent to it.
func TestHookJudgesAWrappedServerByWhatThisToolwardenWraps(t *testing.T) {
	t.Parallel()
	h := newHookRun(t)
	h.put(time.Now(), fsReadDef) // the entry of npx server-filesystem, as wrap writes it
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	wrapped := func(command string) string {
		data, _ := json.Marshal(map[string]any{"command": command, "args": []string{"wrap", "--app", "fs", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/src"}})
		return `{"mcpServers":{"fs":` + string(data) + `}}`
	}
	writeTestFile(t, filepath.Join(h.home, ".claude.json"), wrapped(self))
	if v, out, _ := h.decide("claude", "read_text_file", "s1"); v != "allow" {
		t.Fatalf("through this toolwarden's wrap: %s %s", v, out)
	}
	writeTestFile(t, filepath.Join(h.home, ".claude.json"), wrapped("/usr/local/bin/toolwarden"))
	if v, out, _ := h.decide("claude", "read_text_file", "s2"); v != "ask" || !strings.Contains(out, "other servers named") {
		t.Fatalf("through a file named toolwarden: %s %s", v, out)
	}
}

// A .mcp.json server that an interactive Claude Code does not run (never
// approved) gets no catalog entry, even one listed from that very server,
// and the reason says why; the user's approval makes it count.
func TestHookUsesNoEntryForAServerTheAgentDoesNotRun(t *testing.T) {
	t.Parallel()
	h := newHookRun(t)
	h.vars["CLAUDE_CODE_ENTRYPOINT"] = "cli"
	project := t.TempDir()
	h.project = project
	writeTestFile(t, filepath.Join(h.home, ".claude.json"), `{}`)
	writeTestFile(t, filepath.Join(project, ".mcp.json"), `{"mcpServers":{"fs":`+fsServer+`}}`)
	writeTestFile(t, filepath.Join(project, ".claude", "settings.local.json"), `{"enabledMcpjsonServers":["fs"]}`)
	id := hook.Places{Home: h.home, Project: project, Getenv: func(k string) string { return h.env()[k] }, Environ: os.Environ()}.Resolve(hook.Claude, "fs")
	if id.Outcome != hook.Runs {
		t.Fatalf("approved .mcp.json server: %+v", id)
	}
	putCatalogOf(t, h.catalog, id.Server.Spec.Identity(), time.Now(), fsReadDef)
	ev := strings.ReplaceAll(agentEvent("claude", "read_text_file", "s1"), `"cwd":"/home/me/src"`, `"cwd":`+quoteJSON(project))
	decide := func() (string, string) {
		code, out, stderr := runCLIEnv(t, h.env(), ev, "hook", "--agent", "claude", "--state-dir", h.state, "--approvals", h.approvals)
		if code != exitOK {
			t.Fatalf("exit %d %s %s", code, out, stderr)
		}
		return permission(t, out), out
	}
	if v, out := decide(); v != "allow" {
		t.Fatalf("approved: %s %s", v, out)
	}
	writeTestFile(t, filepath.Join(project, ".claude", "settings.local.json"), `{}`)
	if v, out := decide(); v != "ask" || !strings.Contains(out, "has not been approved") {
		t.Fatalf("not approved: %s %s", v, out)
	}
}
