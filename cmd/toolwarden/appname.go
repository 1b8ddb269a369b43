package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/toolwarden/toolwarden/internal/config"
)

// defaultAppName names a wrapped server when --app is not given. The name
// selects [apps.<name>] and [mcp_servers.<name>], so it must tell servers
// apart: it is the package the command runs, not the file it starts.
//
//	npx -y @modelcontextprotocol/server-filesystem ~/src   server-filesystem
//	node .../server-filesystem/dist/index.js               server-filesystem (nearest package.json)
//	uvx mcp-server-git, python -m mcp_server_git            mcp-server-git, mcp_server_git
//	docker run -i --rm ghcr.io/github/github-mcp-server     github-mcp-server
//	/usr/local/bin/my-tools                                my-tools
func defaultAppName(command string, args []string) string {
	name := appNameFrom(command, args)
	name = strings.Trim(notAppNameChar().ReplaceAllString(name, "_"), "_")
	if name == "" {
		return "server"
	}
	return name
}

// The patterns are compiled on first use: every toolwarden process (one
// per hook event) would otherwise compile them at start, for wrap alone.
var notAppNameChar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]+`) })

// wrapAppName picks the name of a server wrapped without --app. A config
// written for an earlier release may name the server as that release did
// ("filesystem" for server-filesystem): when the config has tables for
// that name and none for today's, the older name is kept, with a note, so
// that a rule written for the server still applies to it. A new default
// name must never make a user's rule silently stop matching.
func wrapAppName(cfg *config.Config, command string, args []string) (name, note string) {
	name = defaultAppName(command, args)
	old := legacyAppName(command, args)
	if old == name || cfg == nil || namesTables(cfg, name) || !namesTables(cfg, old) {
		return name, ""
	}
	return old, "the config has tables for \"" + old + "\" (this server's name before toolwarden named it \"" + name + "\"): using \"" + old + "\"; pass --app to choose"
}

// namesTables reports whether cfg has [apps.<name>] or [mcp_servers.<name>].
func namesTables(cfg *config.Config, name string) bool {
	_, app := cfg.Apps[name]
	_, srv := cfg.Servers[name]
	return app || srv
}

// launchers are commands that run another program named by their first
// non-flag argument; the server is named after that program instead.
var launchers = map[string]bool{
	"npx": true, "bunx": true, "pnpx": true, "uvx": true, "pipx": true, "node": true, "deno": true,
	"bun": true, "python": true, "python3": true, "uv": true, "go": true, "docker": true, "podman": true,
}

var (
	versionSuffix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`@[^/@]*$`) })
	notNameChar   = notAppNameChar
)

// legacyAppName is the name earlier releases gave a wrapped server: the basename, or for
// a launcher (npx, uvx, node, docker...) the package or script it runs,
// minus scope, version, extension and mcp/server affixes.
// "npx -y @modelcontextprotocol/server-filesystem ~/src" was "filesystem".
func legacyAppName(command string, args []string) string {
	name := filepath.Base(command)
	if launchers[strings.TrimSuffix(name, ".exe")] {
		for _, a := range args {
			if strings.HasPrefix(a, "-") || a == "run" || a == "dlx" || a == "x" || a == "tool" {
				continue
			}
			name = a
			break
		}
	}
	name = versionSuffix().ReplaceAllString(name, "")
	name = filepath.Base(name)
	name = strings.TrimSuffix(name, filepath.Ext(name))
	for _, p := range []string{"mcp-server-", "server-", "mcp-"} {
		if n, ok := strings.CutPrefix(name, p); ok && n != "" {
			name = n
			break
		}
	}
	for _, s := range []string{"-mcp-server", "-mcp", "-server"} {
		if n, ok := strings.CutSuffix(name, s); ok && n != "" {
			name = n
			break
		}
	}
	name = strings.Trim(notNameChar().ReplaceAllString(name, "_"), "_")
	if name == "" {
		return "server"
	}
	return name
}

// valueFlags are launcher flags whose value is the next argument, so the
// value is never mistaken for the package ("docker run -e TOKEN image").
var valueFlags = map[string]map[string]bool{
	"npx":    {"-c": true, "--call": true, "--cache": true, "--registry": true},
	"uvx":    {"--with": true, "--python": true, "-p": true, "--index": true, "--index-url": true, "--extra-index-url": true, "--with-requirements": true},
	"uv":     {"--with": true, "--python": true, "-p": true, "--directory": true, "--project": true, "--index-url": true},
	"pipx":   {"--python": true, "--pip-args": true, "--index-url": true},
	"docker": {"-e": true, "--env": true, "--env-file": true, "-v": true, "--volume": true, "--name": true, "-w": true, "--workdir": true, "--network": true, "--mount": true, "-u": true, "--user": true, "--entrypoint": true, "-p": true, "--publish": true, "--platform": true, "-l": true, "--label": true, "--add-host": true, "--pull": true, "-h": true, "--hostname": true, "--cpus": true, "-m": true, "--memory": true},
	"deno":   {"--config": true, "-c": true, "--import-map": true},
	"python": {"-W": true, "-X": true},
	"node":   {"-r": true, "--require": true, "--import": true, "--loader": true},
}

// packageFlags name the package outright: "npx -p pkg cmd", "uvx --from pkg cmd".
var packageFlags = map[string]map[string]bool{
	"npx":  {"--package": true, "-p": true},
	"uvx":  {"--from": true},
	"uv":   {"--from": true},
	"pipx": {"--spec": true},
}

// launcherVerbs are subcommands launchers take before what they run
// ("docker run", "pnpm dlx", "uv tool run").
var launcherVerbs = map[string]bool{"run": true, "dlx": true, "x": true, "exec": true, "tool": true}

func appNameFrom(command string, args []string) string {
	base := strings.TrimSuffix(filepath.Base(command), ".exe")
	kind := base
	switch {
	case strings.HasPrefix(base, "python"):
		kind = "python"
	case base == "podman":
		kind = "docker"
	case base == "pnpx" || base == "pnpm" || base == "yarn":
		kind = "npx"
	case base == "bun":
		kind = "bunx"
	}
	switch kind {
	case "npx", "bunx", "uvx", "pipx", "uv", "docker", "deno", "node", "python", "go":
	default:
		return base // a binary: its own name
	}
	verbs := true // verbs come before the first operand only
	for i := 0; i < len(args); i++ {
		a := args[i]
		if kind == "python" && a == "-m" && i+1 < len(args) {
			return args[i+1] // python -m pkg
		}
		if strings.HasPrefix(a, "-") {
			flag, value, hasValue := strings.Cut(a, "=")
			if packageFlags[kind][flag] {
				if hasValue {
					return packageName(value)
				}
				if i+1 < len(args) {
					return packageName(args[i+1])
				}
			}
			if valueFlags[kind][flag] && !hasValue {
				i++
			}
			continue
		}
		if verbs && launcherVerbs[a] {
			continue
		}
		verbs = false
		switch kind {
		case "node", "deno", "bunx", "python", "uv":
			if isScript(a) {
				return scriptName(a)
			}
		case "go":
			return goPackageName(a)
		case "docker":
			return imageName(a)
		}
		return packageName(a)
	}
	return base
}

// isScript tells a file to run from a package to fetch ("index.js",
// "./server.py", "/x/y.ts" are files; "@scope/pkg", "npm:pkg", "pkg" are not).
func isScript(a string) bool {
	if strings.HasPrefix(a, "npm:") || strings.HasPrefix(a, "jsr:") || strings.HasPrefix(a, "@") {
		return false
	}
	if strings.ContainsRune(a, '/') || strings.ContainsRune(a, filepath.Separator) {
		return true
	}
	switch filepath.Ext(a) {
	case ".js", ".mjs", ".cjs", ".ts", ".mts", ".py", ".pyz":
		return true
	}
	return false
}

// packageName strips what is not the name from a package spec:
// "npm:@scope/pkg@1.2" and "pkg[extra]==1.0" are "pkg".
func packageName(spec string) string {
	spec = strings.TrimPrefix(strings.TrimPrefix(spec, "npm:"), "jsr:")
	if strings.HasPrefix(spec, "@") {
		if _, rest, ok := strings.Cut(spec, "/"); ok {
			spec = rest
		}
	}
	if i := strings.IndexAny(spec, "@[=<>~! "); i > 0 {
		spec = spec[:i]
	}
	if strings.Contains(spec, "://") || strings.HasPrefix(spec, "git+") {
		spec = strings.TrimSuffix(filepath.Base(spec), ".git")
	}
	return spec
}

// imageName is an image's last path element without tag or digest.
func imageName(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		ref = ref[i+1:]
	}
	ref, _, _ = strings.Cut(ref, ":")
	return ref
}

// goPackageName is a "go run" target's last path element without version.
func goPackageName(pkg string) string {
	pkg, _, _ = strings.Cut(pkg, "@")
	pkg = strings.TrimRight(pkg, "/")
	if pkg == "." || pkg == "" {
		if wd, err := os.Getwd(); err == nil {
			return filepath.Base(wd)
		}
	}
	return filepath.Base(pkg)
}

// genericScripts are file names that say nothing about the server.
var genericScripts = map[string]bool{"index": true, "main": true, "server": true, "cli": true, "app": true, "__main__": true, "run": true, "start": true, "mcp": true}

// scriptName names a script after the package that holds it: the nearest
// package.json's "name" (or pyproject.toml's), walking up from the script,
// else the script's own name, else (index.js, main.py) its folder's.
func scriptName(script string) string {
	p, err := filepath.Abs(script)
	if err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
			if n := manifestName(dir); n != "" {
				return packageName(n)
			}
			if filepath.Dir(dir) == dir || filepath.Base(dir) == "node_modules" {
				break
			}
		}
	}
	stem := strings.TrimSuffix(filepath.Base(script), filepath.Ext(script))
	if !genericScripts[stem] {
		return stem
	}
	for dir := filepath.Dir(p); filepath.Dir(dir) != dir; dir = filepath.Dir(dir) {
		switch b := filepath.Base(dir); b {
		case "dist", "build", "lib", "src", "bin", "out", ".":
			continue
		default:
			return b
		}
	}
	return stem
}

var pyprojectName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*name\s*=\s*["']([^"']+)["']`) })

// manifestName is the package name declared in dir, or "".
func manifestName(dir string) string {
	if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
		var m struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(b, &m) == nil && m.Name != "" {
			return m.Name
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "pyproject.toml")); err == nil {
		if m := pyprojectName().FindSubmatch(b); m != nil {
			return string(m[1])
		}
	}
	return ""
}
