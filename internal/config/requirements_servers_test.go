package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// loadWithServerRequirement writes a requirements file and a user config
// and loads them together.
func loadWithServerRequirement(t *testing.T, requirements, user string, more ...string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	rp := filepath.Join(dir, "requirements.toml")
	up := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(rp, []byte(requirements), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(up, []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	layers := []string{up}
	for i, m := range more {
		p := filepath.Join(dir, "layer"+string(rune('a'+i))+".toml")
		if err := os.WriteFile(p, []byte(m), 0o600); err != nil {
			t.Fatal(err)
		}
		layers = append(layers, p)
	}
	return LoadWithRequirements([]string{rp}, layers...)
}

func stdioServer(name, command string, args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = quote(a)
	}
	return "[mcp_servers." + name + "]\ncommand = " + quote(command) + "\nargs = [" + strings.Join(q, ", ") + "]\n"
}

func httpServer(name, url string) string {
	return "[mcp_servers." + name + "]\nurl = " + quote(url) + "\n"
}

// TestServerRequirementsMatchAsCodexDoes translates codex-rs's MCP server
// requirement tests (mcp_requirements_tests.rs and the config loader's
// filter tests): which configured servers an [mcp_servers] allow-list in a
// requirements file lets run.
func TestServerRequirementsMatchAsCodexDoes(t *testing.T) {
	t.Parallel()
	const matcher = `
[mcp_servers.pricing]
command = "company-cli"
args = [{ match = "exact", value = "mcp" }, { match = "regex", expression = 'https://[a-z]+\.example\.com' }]
`
	cases := []struct {
		name        string
		requirement string
		server      string
		want        bool
	}{
		{"command_matcher_matches_exact_positional_arguments: in place", matcher, stdioServer("pricing", "company-cli", "mcp", "https://pricing.example.com"), true},
		{"command_matcher_matches_exact_positional_arguments: swapped arguments", matcher, stdioServer("pricing", "company-cli", "https://pricing.example.com", "mcp"), false},
		{"command_matcher_matches_exact_positional_arguments: one argument more", matcher, stdioServer("pricing", "company-cli", "mcp", "https://pricing.example.com", "--verbose"), false},
		{"command_matcher_matches_exact_positional_arguments: the same program by another path", matcher, stdioServer("pricing", "/usr/local/bin/company-cli", "mcp", "https://pricing.example.com"), false},
		{"regex_matcher_requires_a_full_value_match: the whole value", "[mcp_servers.s]\ncommand = \"c\"\nargs = [{ match = \"regex\", expression = \"mcp\" }]\n", stdioServer("s", "c", "mcp"), true},
		{"regex_matcher_requires_a_full_value_match: a suffix is not enough", "[mcp_servers.s]\ncommand = \"c\"\nargs = [{ match = \"regex\", expression = \"mcp\" }]\n", stdioServer("s", "c", "mcp-proxy"), false},
		{"regex_matcher_requires_a_full_value_match: a prefix is not enough", "[mcp_servers.s]\ncommand = \"c\"\nargs = [{ match = \"regex\", expression = \"mcp\" }]\n", stdioServer("s", "c", "prefix-mcp"), false},
		{"regex_matcher_allows_a_later_alternative_to_match_the_full_value", "[mcp_servers.s]\nurl = { match = \"regex\", expression = 'https://api\\.example\\.com|https://api\\.example\\.com/mcp' }\n", httpServer("s", "https://api.example.com/mcp"), true},
		{"legacy_command_identity_keeps_ignoring_arguments", "[mcp_servers.s.identity]\ncommand = \"company-cli\"\n", stdioServer("s", "company-cli", "any", "arguments", "remain", "allowed"), true},
		{"legacy_command_identity_keeps_ignoring_arguments: another command", "[mcp_servers.s.identity]\ncommand = \"company-cli\"\n", stdioServer("s", "different-cli"), false},
		{"identity_requirement_keeps_ignoring_unrelated_sibling_fields", "[mcp_servers.s]\nunrelated = \"ignored\"\n[mcp_servers.s.identity]\ncommand = \"company-cli\"\n", stdioServer("s", "company-cli"), true},
		{"a url identity is compared exactly", "[mcp_servers.r.identity]\nurl = \"https://example.com/mcp\"\n", httpServer("r", "https://example.com/mcp"), true},
		{"a url identity does not admit another path", "[mcp_servers.r.identity]\nurl = \"https://example.com/mcp\"\n", httpServer("r", "https://example.com/other"), false},
		{"a url prefix matcher admits a path under it", "[mcp_servers.r]\nurl = { match = \"prefix\", value = \"https://mcp.example.com/\" }\n", httpServer("r", "https://mcp.example.com/v1"), true},
		{"a url prefix matcher does not admit a look-alike host", "[mcp_servers.r]\nurl = { match = \"prefix\", value = \"https://mcp.example.com/\" }\n", httpServer("r", "https://mcp.example.com.evil.test/v1"), false},
		{"a command identity never admits an HTTP server", "[mcp_servers.r.identity]\ncommand = \"https://example.com/mcp\"\n", httpServer("r", "https://example.com/mcp"), false},
		{"a url identity never admits a stdio server", "[mcp_servers.r.identity]\nurl = \"docs-mcp\"\n", stdioServer("r", "docs-mcp"), false},
		{"filter: a server the allow-list does not name is disabled, whatever its command", "[mcp_servers.docs.identity]\ncommand = \"same-cmd\"\n", stdioServer("other", "same-cmd"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := loadWithServerRequirement(t, tc.requirement, tc.server)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Servers) != 1 {
				t.Fatalf("servers %v", c.Servers)
			}
			for name, s := range c.Servers {
				if got := Bool(s.Enabled, true); got != tc.want {
					t.Errorf("server %s enabled = %v, want %v", name, got, tc.want)
				}
				if _, required := c.RequiredBy("mcp_servers." + quoteKey(name) + ".enabled"); required == tc.want {
					t.Errorf("RequiredBy = %v, want %v", required, !tc.want)
				}
			}
		})
	}
}

// TestServerRequirementsHoldAgainstUserLayers: a project layer that turns
// a disallowed server back on, or moves an allowed name to another
// command, is overridden, and validate's list names both places.
func TestServerRequirementsHoldAgainstUserLayers(t *testing.T) {
	t.Parallel()
	const requirement = "[mcp_servers.docs.identity]\ncommand = \"docs-mcp\"\n"
	c, err := loadWithServerRequirement(t, requirement,
		stdioServer("docs", "docs-mcp", "--root", "/srv")+stdioServer("shell", "bash", "-c", "nc -l 4444"),
		"[mcp_servers.shell]\nenabled = true\n",
		"[mcp_servers.docs]\ncommand = \"curl\"\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"docs", "shell"} {
		if Bool(c.Servers[name].Enabled, true) {
			t.Errorf("%s is enabled; the allow-list does not admit it", name)
		}
		wantRequired(t, c, "mcp_servers."+name+".enabled", "requirements.toml")
	}
	var msgs []string
	for _, o := range c.Overrides {
		msgs = append(msgs, o.String())
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		`"shell" is not in the mcp_servers allow-list (docs)`,
		`"docs" (curl) does not match the required command "docs-mcp"`,
		"requirements.toml:1:",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("overrides do not say %q:\n%s", want, all)
		}
	}
}

// TestServerRequirementsRefuseMalformedEntries: each malformed allow-list
// entry is an error at its place in the requirements file, never a
// requirement silently dropped (which would admit every server).
func TestServerRequirementsRefuseMalformedEntries(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, requirement, want string }{
		{"requirement_rejects_identity_combined_with_matcher_keys: command", "[mcp_servers.s]\ncommand = \"company-cli\"\n[mcp_servers.s.identity]\ncommand = \"company-cli\"\n", "identity cannot be combined"},
		{"requirement_rejects_identity_combined_with_matcher_keys: args", "[mcp_servers.s]\nargs = []\n[mcp_servers.s.identity]\ncommand = \"company-cli\"\n", "identity cannot be combined"},
		{"requirement_rejects_identity_combined_with_matcher_keys: url", "[mcp_servers.s]\nurl = { match = \"prefix\", value = \"https://mcp.example.com/\" }\n[mcp_servers.s.identity]\nurl = \"https://mcp.example.com\"\n", "identity cannot be combined"},
		{"an invalid regex", "[mcp_servers.s]\ncommand = \"c\"\nargs = [{ match = \"regex\", expression = \"(\" }]\n", "invalid regex"},
		{"an unknown match kind", "[mcp_servers.s]\ncommand = \"c\"\nargs = [{ match = \"glob\", value = \"*\" }]\n", `match must be "exact", "prefix" or "regex"`},
		{"a regex matcher with value instead of expression", "[mcp_servers.s]\ncommand = \"c\"\nargs = [{ match = \"regex\", value = \"x\" }]\n", "unknown key \"value\" in a regex matcher"},
		{"an empty entry", "[mcp_servers.s]\n", "needs [mcp_servers.s.identity], command (with args) or url"},
		{"an identity with both command and url", "[mcp_servers.s.identity]\ncommand = \"c\"\nurl = \"https://x\"\n", "needs exactly one of command or url"},
		{"a command and a url", "[mcp_servers.s]\ncommand = \"c\"\nurl = { match = \"exact\", value = \"https://x\" }\n", "either a command or a url"},
		{"an unknown key", "[mcp_servers.s]\ncommand = \"c\"\nenvironment = {}\n", `unknown key "environment" in a server requirement`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadWithServerRequirement(t, tc.requirement, stdioServer("s", "c"))
			var le *LoadError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "requirements.toml:") {
				t.Fatalf("error %v, want a *LoadError at requirements.toml containing %q", err, tc.want)
			}
		})
	}
}
