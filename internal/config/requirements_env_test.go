package config

import (
	"errors"
	"strings"
	"testing"
)

// allowedUnder parses requirement and asks whether it lets s run as name.
func allowedUnder(t *testing.T, requirement, name string, s *Server) error {
	t.Helper()
	r, err := ParseRequirements("requirements.toml", []byte(requirement))
	if err != nil {
		t.Fatalf("requirement does not load: %v", err)
	}
	cfg, err := Default().ApplyRequirements(r)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.ServerAllowed(name, s)
}

// An allow-list that admits a server's command does not admit code its
// environment loads, or a relative command run from a directory it does
// not name: for every form of entry, a variable that loads code runs only
// when the entry names it with a matching value, and a named variable
// must match whenever it is set.
func TestAllowListsJudgeTheServersEnvironmentAndDirectory(t *testing.T) {
	t.Parallel()
	const allowed = "[[allowed_servers]]\ncommand = \"npx\"\nargs = [\"-y\", \"server-fs\"]\n"
	const named = allowed + "env = { NODE_OPTIONS = { match = \"exact\", value = \"--max-old-space-size=4096\" } }\n"
	const matcher = "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [{ match = \"exact\", value = \"-y\" }, { match = \"exact\", value = \"server-fs\" }]\n"
	const identity = "[mcp_servers.fs.identity]\ncommand = \"npx\"\n"
	const inDir = "[mcp_servers.fs]\ncommand = \"./server\"\ncwd = { match = \"exact\", value = \"/srv/fs\" }\n"
	npx := func(env map[string]string) *Server {
		return &Server{Command: "npx", Args: []string{"-y", "server-fs"}, Env: env}
	}
	cases := []struct {
		name, requirement string
		server            *Server
		want              string // "" admits
	}{
		{"a plain environment is admitted", allowed, npx(map[string]string{"DEBUG": "1", "PYTHONUNBUFFERED": "1"}), ""},
		{"NODE_OPTIONS the entry does not name is refused", allowed, npx(map[string]string{"NODE_OPTIONS": "--require /tmp/evil.js"}), "env sets NODE_OPTIONS, which can make the server run other code"},
		{"LD_PRELOAD is refused", allowed, npx(map[string]string{"LD_PRELOAD": "/tmp/evil.so"}), "env sets LD_PRELOAD"},
		{"a DYLD_ variable is refused", allowed, npx(map[string]string{"DYLD_INSERT_LIBRARIES": "/tmp/evil.dylib"}), "env sets DYLD_INSERT_LIBRARIES"},
		{"a PATH set by the config is refused", allowed, npx(map[string]string{"PATH": "/tmp/evil:/usr/bin"}), "env sets PATH"},
		{"npm's registry in lower case is refused", allowed, npx(map[string]string{"npm_config_registry": "https://evil.example"}), "env sets npm_config_registry"},
		{"git's configured commands are refused", allowed, npx(map[string]string{"GIT_CONFIG_KEY_0": "core.fsmonitor"}), "env sets GIT_CONFIG_KEY_0"},
		{"a named variable with the required value is admitted", named, npx(map[string]string{"NODE_OPTIONS": "--max-old-space-size=4096"}), ""},
		{"a named variable with another value is refused", named, npx(map[string]string{"NODE_OPTIONS": "--require /tmp/evil.js"}), `env NODE_OPTIONS = "--require /tmp/evil.js" does not match the required exact "--max-old-space-size=4096"`},
		{"a named variable left unset is admitted", named, npx(nil), ""},
		{"env_vars passing NODE_OPTIONS through is refused", allowed, &Server{Command: "npx", Args: []string{"-y", "server-fs"}, EnvVars: []EnvVar{{Name: "NODE_OPTIONS"}}}, "env_vars passes NODE_OPTIONS"},
		{"env_vars passing PATH through is admitted: every server gets it", allowed, &Server{Command: "npx", Args: []string{"-y", "server-fs"}, EnvVars: []EnvVar{{Name: "PATH"}}}, ""},
		{"Codex's matcher form refuses NODE_OPTIONS", matcher, npx(map[string]string{"NODE_OPTIONS": "--require evil.js"}), `server "fs" (npx): env sets NODE_OPTIONS`},
		{"Codex's identity form refuses NODE_OPTIONS", identity, npx(map[string]string{"NODE_OPTIONS": "--require evil.js"}), "env sets NODE_OPTIONS"},
		{"any directory is admitted when the entry names none", allowed, &Server{Command: "npx", Args: []string{"-y", "server-fs"}, Cwd: "/home/u/project"}, ""},
		{"a relative command is refused when the entry names no directory", identity, &Server{Command: "./npx"}, `server "fs" (./npx) does not match the required command "npx"`},
		{"a relative command with a legacy relative identity is refused", "[mcp_servers.fs.identity]\ncommand = \"./server\"\n", &Server{Command: "./server"}, "relative to the server's directory, which the requirement does not name"},
		{"a relative command in the named directory is admitted", inDir, &Server{Command: "./server", Cwd: "/srv/fs"}, ""},
		{"a relative command in an attacker's directory is refused", inDir, &Server{Command: "./server", Cwd: "/tmp/evil"}, `cwd "/tmp/evil" does not match the required exact "/srv/fs"`},
		{"a directory that climbs out of the named one is refused", inDir, &Server{Command: "./server", Cwd: "/srv/fs/../../tmp/evil"}, `cwd "/tmp/evil" does not match`},
		{"an unknown directory is refused when the entry names one", inDir, &Server{Command: "./server"}, "the server's directory is not set to an absolute path"},
		{"a relative directory is refused when the entry names one", inDir, &Server{Command: "./server", Cwd: "fs"}, "the server's directory is not set to an absolute path"},
		{"an HTTP server is not judged by env", "[[allowed_servers]]\nurl = \"https://mcp.example.com\"\n", &Server{URL: "https://mcp.example.com", Env: map[string]string{"NODE_OPTIONS": "x"}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := allowedUnder(t, tc.requirement, "fs", tc.server)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "required by requirements.toml:")):
				t.Fatalf("got %v, want a refusal containing %q and naming the requirement", err, tc.want)
			}
		})
	}
}

// A server a requirement disables for its env cannot be turned back on by
// a user layer, and the override says why.
func TestAServerWhoseEnvLoadsCodeIsDisabledAtLoad(t *testing.T) {
	t.Parallel()
	cfg, err := loadWithServerRequirement(t, "[[allowed_servers]]\ncommand = \"npx\"\n",
		"[mcp_servers.fs]\ncommand = \"npx\"\nenv = { NODE_OPTIONS = \"--require evil.js\" }\n",
		"[mcp_servers.fs]\nenabled = true\n")
	if err != nil {
		t.Fatal(err)
	}
	if Bool(cfg.Servers["fs"].Enabled, true) {
		t.Fatal("a server whose env loads code the list never named is enabled")
	}
	if len(cfg.Overrides) != 1 || !strings.Contains(cfg.Overrides[0].String(), "env sets NODE_OPTIONS") {
		t.Fatalf("overrides %v do not say why", cfg.Overrides)
	}
}

// Malformed env and cwd matchers are errors at their place, and an entry
// that could only ever admit a relative command from any directory is
// refused when it loads rather than read as admitting one.
func TestEnvAndCwdMatchersRefuseMalformedEntries(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, requirement, want string }{
		{"env on a url", "[mcp_servers.s]\nurl = { match = \"exact\", value = \"https://x\" }\nenv = { A = { match = \"exact\", value = \"b\" } }\n", "env applies to a command, not to a url"},
		{"cwd on an allowed url", "[[allowed_servers]]\nurl = \"https://x\"\ncwd = { match = \"exact\", value = \"/srv\" }\n", "cwd applies to a command, not to a url"},
		{"env that is not a table", "[mcp_servers.s]\ncommand = \"c\"\nenv = \"NODE_OPTIONS\"\n", "mcp_servers.s.env"},
		{"an env value that is not a matcher", "[[allowed_servers]]\ncommand = \"c\"\nenv = { NODE_OPTIONS = \"--x\" }\n", "expected a matcher"},
		{"a relative cwd", "[mcp_servers.s]\ncommand = \"c\"\ncwd = { match = \"exact\", value = \"srv\" }\n", "must be an absolute directory"},
		{"a relative command without cwd", "[mcp_servers.s]\ncommand = \"./server\"\n", `command "./server" is relative`},
		{"a relative allowed command without cwd", "[[allowed_servers]]\ncommand = \"bin/server\"\n", `command "bin/server" is relative`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseRequirements("requirements.toml", []byte(tc.requirement))
			var le *LoadError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "requirements.toml:") {
				t.Fatalf("error %v, want a *LoadError at requirements.toml containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadsCodeNamesTheVariablesThatRunOtherCode(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"NODE_OPTIONS", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_LIBRARY_PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
		"BASH_ENV", "ENV", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "NODE_PATH",
		"GIT_SSH_COMMAND", "GIT_CONFIG_COUNT", "BASH_FUNC_npx%%", "NPM_CONFIG_REGISTRY", "npm_config_userconfig", "PATH", "node_options"} {
		if !LoadsCode(n) {
			t.Errorf("%s is not judged as loading code", n)
		}
	}
	for _, n := range []string{"HOME", "DEBUG", "PYTHONUNBUFFERED", "NODE_ENV", "GIT_SSL_CAINFO", "NODE_EXTRA_CA_CERTS", "LANG", "GITHUB_TOKEN"} {
		if LoadsCode(n) {
			t.Errorf("%s is judged as loading code, and would refuse ordinary servers", n)
		}
	}
}
