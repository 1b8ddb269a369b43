package config

import (
	"strings"
	"testing"
)

// TestServerTablesMatchCodexTests translates Codex's own tests of the
// [mcp_servers.<name>] schema (codex-rs/config/src/mcp_types_tests.rs):
// what Codex accepts loads, and what it refuses is refused, with
// toolwarden's file:line:col error.
func TestServerTablesMatchCodexTests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		codexTest string
		src       string
		wantErr   string // "" = loads
	}{
		{"deserialize_stdio_command_server_config", `command = "echo"`, ""},
		{"deserialize_stdio_command_server_config_with_args", "command = \"echo\"\nargs = [\"hello\", \"world\"]", ""},
		{"deserialize_stdio_command_server_config_with_arg_with_args_and_env", "command = \"echo\"\nargs = [\"hello\"]\nenv = { \"FOO\" = \"BAR\" }", ""},
		{"deserialize_stdio_command_server_config_with_env_vars", "command = \"echo\"\nenv_vars = [\"FOO\", \"BAR\"]", ""},
		{"deserialize_stdio_command_server_config_with_env_var_sources", "command = \"echo\"\nenv_vars = [\"LEGACY_TOKEN\", { name = \"LOCAL_TOKEN\", source = \"local\" }, { name = \"REMOTE_TOKEN\", source = \"remote\" }]", ""},
		{"deserialize_stdio_command_server_config_rejects_unknown_env_var_source", "command = \"echo\"\nenv_vars = [{ name = \"TOKEN\", source = \"elsewhere\" }]", `unknown source "elsewhere"`},
		{"deserialize_stdio_command_server_config_with_cwd", "command = \"echo\"\ncwd = \"/tmp\"", ""},
		{"deserialize_disabled_server_config", "command = \"echo\"\nenabled = false", ""},
		{"deserialize_required_server_config", "command = \"echo\"\nrequired = true", ""},
		{"deserialize_streamable_http_server_config", `url = "https://example.com/mcp"`, ""},
		{"deserialize_streamable_http_server_config_with_env_var", "url = \"https://example.com/mcp\"\nbearer_token_env_var = \"GITHUB_TOKEN\"", ""},
		{"deserialize_streamable_http_server_config_with_headers", "url = \"https://example.com/mcp\"\nhttp_headers = { \"X-Foo\" = \"bar\" }\nenv_http_headers = { \"X-Token\" = \"TOKEN_ENV\" }", ""},
		{"deserialize_streamable_http_server_config_with_oauth_resource", "url = \"https://example.com/mcp\"\noauth_resource = \"https://api.example.com\"", ""},
		{"deserialize_streamable_http_server_config_with_oauth_client_id", "url = \"https://example.com/mcp\"\n[mcp_servers.s.oauth]\nclient_id = \"eci-prd-pub-codex-123\"", ""},
		{"deserialize_server_config_with_tool_filters", "command = \"echo\"\nenabled_tools = [\"allowed\"]\ndisabled_tools = [\"blocked\"]", ""},
		{"deserialize_server_config_with_parallel_tool_calls", "command = \"echo\"\nsupports_parallel_tool_calls = true", ""},
		{"deserialize_server_config_with_default_tool_approval_mode", "command = \"echo\"\ndefault_tools_approval_mode = \"approve\"\n[mcp_servers.s.tools.search]\napproval_mode = \"prompt\"", ""},
		{"deserialize_rejects_command_and_url", "command = \"echo\"\nurl = \"https://example.com\"", "`url` is not supported for stdio servers"},
		{"deserialize_rejects_env_for_http_transport", "url = \"https://example.com\"\nenv = { \"FOO\" = \"BAR\" }", "`env` is not supported for streamable HTTP servers"},
		{"deserialize_rejects_headers_for_stdio", "command = \"echo\"\nhttp_headers = { \"X-Foo\" = \"bar\" }", "`http_headers` is not supported for stdio servers"},
		{"deserialize_rejects_headers_for_stdio", "command = \"echo\"\nenv_http_headers = { \"X-Foo\" = \"BAR_ENV\" }", "`env_http_headers` is not supported for stdio servers"},
		{"deserialize_rejects_headers_for_stdio", "command = \"echo\"\noauth = { client_id = \"eci-prd-pub-codex-123\" }", "`oauth` is not supported for stdio servers"},
		{"deserialize_rejects_headers_for_stdio", "command = \"echo\"\noauth_resource = \"https://api.example.com\"", "`oauth_resource` is not supported for stdio servers"},
		{"(mcp_types.rs: throw_if_set(\"stdio\", \"auth\"))", "command = \"echo\"\nauth = \"oauth\"", "`auth` is not supported for stdio servers"},
		{"deserialize_rejects_inline_bearer_token_field", "url = \"https://example.com\"\nbearer_token = \"secret\"", "bearer_token"},
	} {
		tc := tc
		t.Run(tc.codexTest, func(t *testing.T) {
			t.Parallel()
			_, err := LoadBytes("c.toml", []byte("[mcp_servers.s]\n"+tc.src+"\n"))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Codex accepts it; toolwarden: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("Codex refuses it; toolwarden loads it")
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Errorf("error %q lacks %q", err, tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), "c.toml:"):
				t.Errorf("error %q does not say where", err)
			}
		})
	}
}
