package config_test

import (
	"fmt"

	"github.com/toolwarden/toolwarden/internal/config"
)

func ExampleLoadBytes() {
	cfg, err := config.LoadBytes("config.toml", []byte(`
model = "gpt-5.1-codex"          # Codex's, ignored
approval_policy = "on-request"

[apps.github]
destructive_enabled = false

[mcp_servers.github]
url = "https://api.githubcopilot.com/mcp/"
bearer_token_env_var = "GITHUB_PAT"
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	gh := cfg.Apps["github"]
	fmt.Println(config.Bool(gh.Enabled, true), config.Bool(gh.DestructiveEnabled, true))
	fmt.Println(cfg.Servers["github"].Transport(), cfg.Servers["github"].ToolTimeout())
	// Output:
	// true false
	// streamable_http 5m0s
}

func ExampleLoadError() {
	_, err := config.LoadBytes("config.toml", []byte(`
[apps.github]
  destructive_enable = false
`))
	fmt.Println(err)
	// Output:
	// config.toml:3:3: apps.github: unknown key "destructive_enable" (did you mean "destructive_enabled"?)
}

func ExampleLoadLayers() {
	user := config.Layer{Name: "~/.codex/config.toml", Data: []byte(`
[mcp_servers.fs]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"]
`)}
	project := config.Layer{Name: ".codex/config.toml", Data: []byte(`
[mcp_servers.fs]
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
default_tools_approval_mode = "writes"
`)}
	cfg, err := config.LoadLayers(user, project)
	if err != nil {
		fmt.Println(err)
		return
	}
	fs := cfg.Servers["fs"]
	fmt.Println(fs.Command, fs.Args[2], fs.DefaultToolsApprovalMode)
	// Output:
	// npx . writes
}
