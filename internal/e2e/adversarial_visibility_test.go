package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One visibility truth, as an attacker tries it: a tool left out of
// tools/list is called anyway, by name, through the real binary with the
// official TypeScript client in front of the real server-filesystem. Every
// such call is refused without a prompt, with a code that names who hid the
// tool, and the file is never read.

// secretDir is a folder holding secret.txt with a unique content.
func secretDir(t *testing.T) (dir, file, content string) {
	t.Helper()
	dir, _ = filepath.EvalSymlinks(t.TempDir())
	content = "TOP-SECRET-" + filepath.Base(dir)
	file = filepath.Join(dir, "secret.txt")
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, file, content
}

// hiderPolicy is a [policies.hider] table with the list-only test plugin
// (internal/plugin/testdata/wat/hidelist.wat), hiding the tools named.
func hiderPolicy(hide ...string) string {
	quoted := make([]string, len(hide))
	for i, h := range hide {
		quoted[i] = fmt.Sprintf("%q", h)
	}
	return fmt.Sprintf("[policies.hider]\nwasm = %q\nconfig = { hide = [%s] }\n",
		filepath.Join(root, "internal", "plugin", "testdata", "wat", "hidelist.wasm"), strings.Join(quoted, ", "))
}

// wantRefused fails unless a call result is a tool error that carries code
// and none of the secret.
func wantRefused(t *testing.T, what string, isError bool, text, code, secret string) {
	t.Helper()
	if !isError || !strings.Contains(text, code) || strings.Contains(text, secret) {
		t.Errorf("%s: want a refusal with %s and no file content, got isError=%v %q", what, code, isError, text)
	}
}

// A plugin's list event hides read_text_file: wrap leaves it out of
// tools/list, and a call to it anyway (after listing, and as the very first
// request) is denied as hidden by that plugin, without asking.
func TestAdversarialCallToAToolAPluginHides(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir, file, secret := secretDir(t)
	cfg := writeFile(t, "hider.toml", hiderPolicy("read_text_file"))
	read := tsStep{Op: "call", Name: "read_text_file", Arguments: map[string]any{"path": file}}

	res := runTS(t, true, []string{"allow_once"}, []tsStep{{Op: "list"}, read, {Op: "call", Name: "list_directory", Arguments: map[string]any{"path": dir}}},
		twBin, wrapArgs(t, "fs", []string{cfg}, fsBin, dir)...)
	r := res.Results
	if len(r) != 3 {
		t.Fatalf("results: %+v", r)
	}
	if contains(r[0].Tools, "read_text_file") || !contains(r[0].Tools, "list_directory") {
		t.Fatalf("tools/list: %v, want list_directory and no read_text_file", r[0].Tools)
	}
	wantRefused(t, "hidden read_text_file called after listing", r[1].IsError, r[1].Text+r[1].Thrown, "hidden_by_plugin", secret)
	mustContain(t, r[1].Text, "hider")
	if r[2].IsError || !strings.Contains(r[2].Text, "secret.txt") {
		t.Errorf("a listed tool of the same server: %+v", r[2])
	}
	if len(res.Asked) != 0 {
		t.Errorf("a hidden tool was put to the human: %+v", res.Asked)
	}

	// No tools/list at all: the call is the first thing the client does.
	res = runTS(t, true, []string{"allow_once"}, []tsStep{read}, twBin, wrapArgs(t, "fs", []string{cfg}, fsBin, dir)...)
	if len(res.Results) != 1 {
		t.Fatalf("results: %+v", res.Results)
	}
	wantRefused(t, "hidden read_text_file called without listing", res.Results[0].IsError, res.Results[0].Text+res.Results[0].Thrown, "hidden_by_plugin", secret)
}

// In proxy mode (<server>__<tool>), a tool hidden by the config
// (disabled_tools) and one hidden by a plugin are both absent from
// tools/list and refused when called by their aggregated names.
func TestAdversarialProxyCallsToHiddenTools(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir, file, secret := secretDir(t)
	cfg := writeFile(t, "proxy.toml", fmt.Sprintf("[mcp_servers.fs]\ncommand = %q\nargs = [%q]\ndisabled_tools = [\"read_text_file\"]\n\n", fsBin, dir)+
		hiderPolicy("read_file", "read_media_file"))
	args := map[string]any{"path": file}
	res := runTS(t, true, []string{"allow_once"}, []tsStep{
		{Op: "list"},
		{Op: "call", Name: "fs__read_text_file", Arguments: args},
		{Op: "call", Name: "fs__read_file", Arguments: args},
		{Op: "call", Name: "fs__list_directory", Arguments: map[string]any{"path": dir}},
	}, twBin, proxyArgs(t, cfg)...)
	r := res.Results
	if len(r) != 4 {
		t.Fatalf("results: %+v", r)
	}
	for _, hidden := range []string{"fs__read_text_file", "fs__read_file", "fs__read_media_file"} {
		if contains(r[0].Tools, hidden) {
			t.Errorf("hidden tool %s is listed: %v", hidden, r[0].Tools)
		}
	}
	if !contains(r[0].Tools, "fs__list_directory") {
		t.Fatalf("tools/list: %v", r[0].Tools)
	}
	wantRefused(t, "fs__read_text_file (disabled_tools)", r[1].IsError, r[1].Text+r[1].Thrown, "blocked_by_app_config", secret)
	wantRefused(t, "fs__read_file (plugin)", r[2].IsError, r[2].Text+r[2].Thrown, "hidden_by_plugin", secret)
	if r[3].IsError || !strings.Contains(r[3].Text, "secret.txt") {
		t.Errorf("a listed tool of the same server: %+v", r[3])
	}
	if len(res.Asked) != 0 {
		t.Errorf("a hidden tool was put to the human: %+v", res.Asked)
	}
}
