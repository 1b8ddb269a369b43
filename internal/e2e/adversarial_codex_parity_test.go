package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Never looser than Codex, as a Codex user would find out: a real Codex
// config in front of the real server-filesystem, through the real binary,
// driven by the official TypeScript client. Codex reads a custom server's
// approval modes only from [mcp_servers.<name>]; nothing in [apps.*] may turn
// those asks into allows. And the approval_policy settings mean what they
// mean to Codex, while what only toolwarden has keeps its meaning.

// codexFS is a Codex [mcp_servers.fs] table for server-filesystem on dir,
// with extra lines, plus the rest of the config.
func codexFS(t *testing.T, fsBin, dir, extra, rest string) string {
	t.Helper()
	return writeFile(t, "config.toml", fmt.Sprintf("model = \"gpt-5.1-codex\"\n%s\n[mcp_servers.fs]\ncommand = %q\nargs = [%q]\n%s\n", rest, fsBin, dir, extra))
}

func TestAdversarialCodexConfigNeverLooser(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	for _, tc := range []struct {
		name       string
		extra      string // in [mcp_servers.fs]
		rest       string // everything else
		tool       string
		wantAsked  bool
		wantResult string // "ran", "declined", "denied"
	}{
		{
			name:  "an approve in apps._default does not lift the server's prompt",
			extra: `default_tools_approval_mode = "prompt"`,
			rest:  "[apps._default]\ndefault_tools_approval_mode = \"approve\"\n",
			tool:  "write_file", wantAsked: true, wantResult: "declined",
		},
		{
			name:  "an approve in apps.<server> does not lift a per-tool prompt",
			extra: "[mcp_servers.fs.tools.write_file]\napproval_mode = \"prompt\"",
			rest:  "[apps.fs]\ndefault_tools_approval_mode = \"approve\"\n[apps.fs.tools.write_file]\napproval_mode = \"approve\"\n",
			tool:  "write_file", wantAsked: true, wantResult: "declined",
		},
		{
			name: "an approve in apps._default does not lift Codex's auto ask for a destructive tool",
			rest: "[apps._default]\ndefault_tools_approval_mode = \"approve\"\n",
			tool: "write_file", wantAsked: true, wantResult: "declined",
		},
		{
			name: "granular mcp_elicitations = false still asks about a tool call",
			rest: "approval_policy = { granular = { sandbox_approval = true, rules = true, mcp_elicitations = false } }\n",
			tool: "write_file", wantAsked: true, wantResult: "declined",
		},
		{
			name: "never with danger-full-access runs Codex's own ask without asking",
			rest: "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n",
			tool: "write_file", wantAsked: false, wantResult: "ran",
		},
		{
			name: "never with danger-full-access denies an ask only toolwarden raises",
			rest: "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n[apps.fs.tools.read_text_file]\napproval_mode = \"prompt\"\n",
			tool: "read_text_file", wantAsked: false, wantResult: "denied",
		},
		{
			name: "never with danger-full-access runs Codex's own ask even where toolwarden also asks",
			rest: "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n[apps.fs.tools.write_file]\napproval_mode = \"prompt\"\n",
			tool: "write_file", wantAsked: false, wantResult: "ran",
		},
		{
			name: "never with a workspace sandbox denies",
			rest: "approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n",
			tool: "write_file", wantAsked: false, wantResult: "denied",
		},
	} {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			target := filepath.Join(dir, "written.txt")
			args := map[string]any{"path": target, "content": "hello"}
			secret := "SECRET-" + filepath.Base(dir)
			if tc.tool == "read_text_file" {
				// The call reads a file; running it shows its content.
				if err := os.WriteFile(target, []byte(secret), 0o600); err != nil {
					t.Fatal(err)
				}
				args = map[string]any{"path": target}
			}
			cfg := codexFS(t, fsBin, dir, tc.extra, tc.rest)
			call := tsStep{Op: "call", Name: tc.tool, Arguments: args}
			res := runTS(t, true, []string{"decline"}, []tsStep{call}, twBin, wrapArgs(t, "fs", []string{cfg}, fsBin, dir)...)
			if len(res.Results) != 1 {
				t.Fatalf("results: %+v", res.Results)
			}
			r := res.Results[0]
			if asked := len(res.Asked) > 0; asked != tc.wantAsked {
				t.Errorf("asked = %v (%+v), want %v", asked, res.Asked, tc.wantAsked)
			}
			_, err := os.Stat(target)
			ran := err == nil
			if tc.tool == "read_text_file" {
				ran = strings.Contains(r.Text, secret)
			}
			switch tc.wantResult {
			case "ran":
				if !ran || r.IsError {
					t.Errorf("the call did not run: %+v", r)
				}
			case "declined":
				if ran {
					t.Errorf("the call ran although the human declined: %+v", r)
				}
			case "denied":
				if ran || !r.IsError || !strings.Contains(r.Text+r.Thrown, "approval_policy") {
					t.Errorf("want a refusal naming approval_policy and no file, got ran=%v %+v", ran, r)
				}
			}
		})
	}
}

// Codex refuses OAuth and auth settings on a stdio server; so does
// toolwarden, with the file, line and column of the key.
func TestAdversarialOAuthOnStdioIsRefused(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "config.toml", "[mcp_servers.fs]\ncommand = \"npx\"\nauth = \"oauth\"\noauth = { client_id = \"codex-cli\" }\n")
	out, err := exec.Command(twBin, "validate", "--config", cfg).CombinedOutput()
	if err == nil {
		t.Fatalf("validate accepted it:\n%s", out)
	}
	for _, want := range []string{
		cfg + ":3:1: mcp_servers.fs: `auth` is not supported for stdio servers",
		cfg + ":4:1: mcp_servers.fs: `oauth` is not supported for stdio servers",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
}
