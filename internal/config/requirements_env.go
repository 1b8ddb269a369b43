package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// codeLoadingNames and codeLoadingPrefixes are the environment variables
// that make a server run code its command line never named: a loader's
// preloads and search paths, an interpreter's options and module paths, a
// shell's startup files and exported functions, the registry a launcher
// (npx, uvx, go run) downloads from, git's configured commands. Names are
// compared in upper case (npm reads its settings in either case, Windows
// every variable). It is the one list: allow-lists refuse these unless the
// requirement names them (ServerRequirement.Env, AllowedServer.Env).
var codeLoadingNames = []string{
	"PATH", // which npx, node or python a command and its scripts find
	"NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE",
	"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONPLATLIBDIR",
	"PYTHONPYCACHEPREFIX", "PYTHONBREAKPOINT", "PYTHONEXECUTABLE",
	"BASH_ENV", "ENV", "ZDOTDIR", "SHELLOPTS", "BASHOPTS", "PS4",
	"PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB",
	"RUBYOPT", "RUBYLIB", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE",
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
	"GOFLAGS", "GOPROXY", "GOTOOLCHAIN",
	"UV_INDEX", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS",
	"GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH",
	"GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_ASKPASS",
	"GIT_PROXY_COMMAND", "GIT_TEMPLATE_DIR", "GIT_DIR", "GIT_COMMON_DIR",
}

var codeLoadingPrefixes = []string{"LD_", "DYLD_", "BASH_FUNC_", "NPM_CONFIG_", "GIT_CONFIG_"}

// LoadsCode reports whether the environment variable name can make a
// server run code that its command and arguments do not name.
func LoadsCode(name string) bool {
	n := strings.ToUpper(name)
	if slices.Contains(codeLoadingNames, n) {
		return true
	}
	return slices.ContainsFunc(codeLoadingPrefixes, func(p string) bool { return strings.HasPrefix(n, p) })
}

// envCwdRule is what one allow-list entry says of a stdio server's
// environment and directory: Env matches the variables it names (when
// set), Cwd the directory the server starts in (nil: any).
type envCwdRule struct {
	Env map[string]ValueMatcher
	Cwd *ValueMatcher
}

// refuses says why the rule does not admit the server's environment or
// directory; "" admits them. A variable the rule names must match when the
// server sets it; a variable that loads code and that the rule does not
// name is refused, and so is one passed through env_vars, whose value the
// config never shows. A relative command with a directory part runs from
// the server's directory, so it is admitted only by a rule that names the
// directory (the load refuses a rule that would otherwise admit one).
func (r envCwdRule) refuses(s *Server) string {
	names := make([]string, 0, len(s.Env))
	for k := range s.Env {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if m, named := r.Env[k]; named {
			if !m.matches(s.Env[k]) {
				return fmt.Sprintf("env %s = %s does not match the required %s", k, quote(s.Env[k]), m)
			}
			continue
		}
		if LoadsCode(k) {
			return fmt.Sprintf("env sets %s, which can make the server run other code, and the requirement does not name it (an admin may add env = { %s = { match = \"exact\", value = \"…\" } })", k, k)
		}
	}
	for _, v := range s.EnvVars {
		if LoadsCode(v.Name) && strings.ToUpper(v.Name) != "PATH" {
			return fmt.Sprintf("env_vars passes %s, which can make the server run other code, from the environment, where no requirement can match its value (set it in env instead)", v.Name)
		}
	}
	if r.Cwd != nil {
		dir := filepath.Clean(s.Cwd)
		if s.Cwd == "" || !filepath.IsAbs(dir) {
			return fmt.Sprintf("the requirement names cwd (%s) and the server's directory is not set to an absolute path", r.Cwd)
		}
		if !r.Cwd.matches(dir) {
			return fmt.Sprintf("cwd %s does not match the required %s", quote(dir), r.Cwd)
		}
	} else if relativeWithDir(s.Command) {
		return fmt.Sprintf("command %s is relative to the server's directory, which the requirement does not name", quote(s.Command))
	}
	return ""
}

// relativeWithDir reports whether a command names a file relative to the
// directory it starts in (./server, bin/server) rather than a program
// found on PATH or an absolute path.
func relativeWithDir(command string) bool {
	return command != "" && !filepath.IsAbs(command) && strings.ContainsAny(command, `/\`)
}

// envCwdRule reads the env and cwd keys of an allow-list entry at path p
// from table t. command is the entry's command ("" for a URL entry, which
// takes neither key).
func (l *loader) envCwdRule(p string, t map[string]any, command string) envCwdRule {
	var r envCwdRule
	if v, ok := t["env"]; ok {
		if command == "" {
			l.errorf(p+".env", "env applies to a command, not to a url")
		} else if et, ok := l.asTable(p+".env", v); ok {
			r.Env = map[string]ValueMatcher{}
			for _, k := range sortedKeys(et) {
				if m, ok := l.valueMatcher(p+".env."+k, et[k]); ok {
					r.Env[k] = m
				}
			}
		}
	}
	cwdErr := false
	if v, ok := t["cwd"]; ok {
		cwdErr = true
		if command == "" {
			l.errorf(p+".cwd", "cwd applies to a command, not to a url")
		} else if m, ok := l.valueMatcher(p+".cwd", v); ok {
			if m.Match != "regex" && !filepath.IsAbs(m.Value) {
				l.errorf(p+".cwd", "cwd %s must be an absolute directory, since a server's directory is matched once resolved", quote(m.Value))
			} else {
				r.Cwd, cwdErr = &m, false
			}
		}
	}
	if relativeWithDir(command) && r.Cwd == nil && !cwdErr {
		l.errorf(p+".command", "command %s is relative: it would run whatever file of that name the server's directory holds; give an absolute path, or name the directory with cwd = { match = \"exact\", value = \"/…\" }", quote(command))
	}
	return r
}
