package serverspec

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
)

func getenv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestFromConfigStdioEnvironmentIsCodexs(t *testing.T) {
	t.Parallel()
	sec := 12.5
	s := &config.Server{
		Name: "fs", Command: "npx", Args: []string{"-y", "pkg"}, Cwd: "/work",
		Env:               map[string]string{"FROM_ENV": "1", "PATH": "/override"},
		EnvVars:           []config.EnvVar{{Name: "PASSED"}, {Name: "UNSET"}},
		StartupTimeoutSec: &sec,
	}
	sp, err := FromConfig(s, getenv(map[string]string{
		"HOME": "/home/u", "PATH": "/usr/bin", "PASSED": "yes", "SECRET_TOKEN": "never",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"FROM_ENV=1", "HOME=/home/u", "PASSED=yes", "PATH=/override"}
	if !slices.Equal(sp.Env, want) {
		t.Errorf("env = %v, want %v", sp.Env, want)
	}
	if sp.Command != "npx" || strings.Join(sp.Args, " ") != "-y pkg" || sp.Dir != "/work" {
		t.Errorf("command: %+v", sp)
	}
	if sp.StartupTimeout != 12500*time.Millisecond || sp.ToolTimeout != config.DefaultToolTimeout {
		t.Errorf("timeouts: %v %v", sp.StartupTimeout, sp.ToolTimeout)
	}
}

func TestFromConfigHTTPHeaders(t *testing.T) {
	t.Parallel()
	s := &config.Server{
		Name: "gh", URL: "https://example.test/mcp",
		HTTPHeaders:       map[string]string{"X-Static": "a"},
		EnvHTTPHeaders:    map[string]string{"X-From-Env": "HDR", "X-Unset": "NOPE"},
		BearerTokenEnvVar: "TOKEN",
	}
	sp, err := FromConfig(s, getenv(map[string]string{"HDR": "b", "TOKEN": "t0k"}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"X-Static": "a", "X-From-Env": "b", "Authorization": "Bearer t0k"}
	if len(sp.Headers) != len(want) {
		t.Fatalf("headers = %v", sp.Headers)
	}
	for k, v := range want {
		if sp.Headers[k] != v {
			t.Errorf("%s = %q, want %q", k, sp.Headers[k], v)
		}
	}
	if _, err := FromConfig(s, getenv(nil)); err == nil || !strings.Contains(err.Error(), "TOKEN") {
		t.Errorf("unset bearer variable: %v", err)
	}
}
