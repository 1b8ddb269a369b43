package serverspec

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
)

// Spec says how to reach one upstream MCP server: a command to run (stdio)
// or a URL (streamable HTTP).
type Spec struct {
	// Name is the server's name: the [mcp_servers.<name>] key, or wrap's
	// --app. Policy sees it as the call's server.
	Name string

	// Command, Args, Env and Dir start a stdio server. Env is the complete
	// environment (KEY=VALUE); nil inherits toolwarden's own.
	Command string
	Args    []string
	Env     []string
	Dir     string

	// URL and Headers reach a streamable HTTP server.
	URL     string
	Headers map[string]string

	// StartupTimeout bounds starting the server, the handshake and the
	// first tools/list (0: 30 s). ToolTimeout bounds each tools/call
	// (0: 300 s).
	StartupTimeout time.Duration
	ToolTimeout    time.Duration

	// ClientCapabilities limits which of the proxy's client's capabilities
	// ("roots", "sampling", "elicitation") the server is told of (see
	// Client.SetClientCapabilities); nil: all of them.
	ClientCapabilities []string

	// Stderr receives a stdio server's stderr; nil discards it.
	Stderr io.Writer
	// Logger receives the client's own diagnostics; nil discards them.
	Logger *slog.Logger
}

// StartupTimeoutOrDefault is StartupTimeout, or the default when unset.
func (s *Spec) StartupTimeoutOrDefault() time.Duration {
	if s.StartupTimeout > 0 {
		return s.StartupTimeout
	}
	return config.DefaultStartupTimeout
}

// ToolTimeoutOrDefault is ToolTimeout, or the default when unset.
func (s *Spec) ToolTimeoutOrDefault() time.Duration {
	if s.ToolTimeout > 0 {
		return s.ToolTimeout
	}
	return config.DefaultToolTimeout
}

// Describe is a short human description: the command line or the URL.
func (s Spec) Describe() string {
	if s.URL != "" {
		return s.URL
	}
	return strings.Join(append([]string{s.Command}, s.Args...), " ")
}

// defaultEnv are the variables Codex passes from its own environment to a
// stdio MCP server (codex-rs rmcp-client DEFAULT_ENV_VARS); everything else
// must be named in env_vars or set in env. Keeping secrets in the parent's
// environment out of a server that was never meant to see them is the point.
var defaultEnv = func() []string {
	vars := []string{"HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ"}
	if runtime.GOOS == "darwin" {
		vars = append(vars, "__CF_USER_TEXT_ENCODING")
	}
	return vars
}()

// FromConfig turns an [mcp_servers.<name>] table into a Spec the way Codex
// does: a stdio server gets the default variables, then env_vars from
// getenv, then env; an HTTP server gets http_headers, then env_http_headers
// (header = value of the named variable, skipped when empty), then
// "Authorization: Bearer $bearer_token_env_var", which must be set.
func FromConfig(s *config.Server, getenv func(string) string) (Spec, error) {
	sp := Spec{
		Name:               s.Name,
		StartupTimeout:     s.StartupTimeout(),
		ToolTimeout:        s.ToolTimeout(),
		ClientCapabilities: s.ClientCapabilities,
	}
	if s.Transport() == "streamable_http" {
		sp.URL = s.URL
		sp.Headers = map[string]string{}
		for k, v := range s.HTTPHeaders {
			sp.Headers[k] = v
		}
		for header, name := range s.EnvHTTPHeaders {
			if v := getenv(name); v != "" {
				sp.Headers[header] = v
			}
		}
		if s.BearerTokenEnvVar != "" {
			tok := getenv(s.BearerTokenEnvVar)
			if tok == "" {
				return sp, fmt.Errorf("mcp_servers.%s: bearer_token_env_var names %s, which is not set (export it, or remove the key)", s.Name, s.BearerTokenEnvVar)
			}
			sp.Headers["Authorization"] = "Bearer " + tok
		}
		if s.HTTPHeadersHelper != "" {
			return sp, fmt.Errorf("mcp_servers.%s: http_headers_helper is not supported by toolwarden yet (use http_headers or env_http_headers)", s.Name)
		}
		return sp, nil
	}
	sp.Command = s.Command
	sp.Args = append([]string(nil), s.Args...)
	sp.Dir = s.Cwd
	env := map[string]string{}
	for _, k := range defaultEnv {
		if v := getenv(k); v != "" {
			env[k] = v
		}
	}
	for _, v := range s.EnvVars {
		if val := getenv(v.Name); val != "" {
			env[v.Name] = val
		}
	}
	for k, v := range s.Env {
		env[k] = v
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sp.Env = make([]string, 0, len(keys))
	for _, k := range keys {
		sp.Env = append(sp.Env, k+"="+env[k])
	}
	return sp, nil
}
