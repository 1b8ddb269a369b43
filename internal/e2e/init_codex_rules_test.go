package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// Trap 3 of issue #23: a Codex user's own rules keep counting after
// "toolwarden init --write-agents". ~/.codex/config.toml says
// [apps.filesystem] destructive_enabled = false; init rewrites its
// [mcp_servers.filesystem] to run through toolwarden wrap; the official
// TypeScript client then starts the entry exactly as written, and the real
// server-filesystem's write_file is still hidden (and a call to it
// refused) while its reads run. init's output says the entry reads both
// files.
func TestInitKeepsACodexUsersAppsRulesForTheWrappedServer(t *testing.T) {
	t.Parallel()
	npmServer(t, "mcp-server-filesystem")
	sdk := nodeSDK(t)

	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(home, "data")
	mkdirs(t, data, filepath.Join(home, ".codex"), filepath.Join(home, "sys"))
	writeAt(t, filepath.Join(data, "hello.txt"), "hi from disk")
	script := filepath.Join(root, "scripts", "npm", "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	codexTOML := filepath.Join(home, ".codex", "config.toml")
	writeAt(t, codexTOML, "model = \"o3\"\n\n[mcp_servers.filesystem]\ncommand = \"node\"\nargs = ["+jsonQuote(script)+", "+jsonQuote(data)+"]\n\n"+
		"[apps.filesystem]\ndestructive_enabled = false   # no writes, moves or edits\n")

	var environ []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "CODEX_HOME", "PATH":
			continue
		}
		environ = append(environ, kv)
	}
	environ = append(environ, "HOME="+home, "PATH="+filepath.Dir(twBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"TOOLWARDEN_SYSTEM_CONFIG_DIR="+filepath.Join(home, "sys"))
	init := exec.Command(twBin, "init", "--write-agents")
	init.Dir, init.Env = home, environ
	out, err := init.CombinedOutput()
	if err != nil {
		t.Fatalf("toolwarden init --write-agents: %v\n%s", err, out)
	}
	twConfig := filepath.Join(home, ".config", "toolwarden", "config.toml")

	var codex struct {
		Servers map[string]struct {
			Command string   `toml:"command"`
			Args    []string `toml:"args"`
		} `toml:"mcp_servers"`
	}
	tb, err := os.ReadFile(codexTOML)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toml.Decode(string(tb), &codex); err != nil {
		t.Fatal(err)
	}
	mustContain(t, string(tb), "[apps.filesystem]\ndestructive_enabled = false   # no writes, moves or edits\n")
	entry := codex.Servers["filesystem"]

	written := filepath.Join(data, "by-codex.txt")
	res := runTSFrom(t, sdk, home, environ, map[string]any{
		"command": entry.Command, "args": entry.Args, "elicitation": true, "answers": []string{"allow_once"},
		"steps": []tsStep{
			{Op: "list"},
			{Op: "call", Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(data, "hello.txt")}},
			{Op: "call", Name: "write_file", Arguments: map[string]any{"path": written, "content": "W"}},
		},
	})
	r := res.Results
	if len(r) != 3 || !contains(r[0].Tools, "read_text_file") {
		t.Fatalf("results: %+v", r)
	}
	if contains(r[0].Tools, "write_file") {
		t.Fatalf("write_file is listed although ~/.codex/config.toml hides destructive tools: %v", r[0].Tools)
	}
	if r[1].IsError || r[1].Text != "hi from disk" {
		t.Errorf("read: %+v", r[1])
	}
	if !r[2].IsError || fileExists(written) || len(res.Asked) != 0 {
		t.Errorf("a call to the hidden write_file ran or was asked: %+v, asked %+v", r[2], res.Asked)
	}
	// What init said is what it did.
	mustContain(t, string(out), "Codex's servers read both "+twConfig+" and "+codexTOML+", in that order")
}
