package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// A project's own MCP config (.mcp.json, .gemini/settings.json,
// .codex/config.toml) comes with the repository, so starting its servers
// runs whatever a clone says. The agents themselves start them only once
// the user trusted them; tools sync does the same, and marks the others
// Untrusted, and Resolve says such a server is not run.

// mcpjsonState is Claude Code's state of one .mcp.json server.
type mcpjsonState int

const (
	pending mcpjsonState = iota // never answered: not run in an interactive session
	approved
	rejected
)

// claudeSettings are the keys of Claude Code's settings files (and of its
// older per-project records in ~/.claude.json) that approve or reject the
// servers of a project's .mcp.json.
type claudeSettings struct {
	Enabled   []string `json:"enabledMcpjsonServers"`
	Disabled  []string `json:"disabledMcpjsonServers"`
	EnableAll bool     `json:"enableAllProjectMcpServers"`
	// SkipBypassPrompt lets a session in bypassPermissions mode run
	// unanswered project servers.
	SkipBypassPrompt bool `json:"skipDangerousModePermissionPrompt"`
}

// claudeProject is a project's record in ~/.claude.json.
type claudeProject struct {
	claudeSettings
	MCPServers    map[string]json.RawMessage `json:"mcpServers"`
	DisabledMCP   []string                   `json:"disabledMcpServers"`
	TrustAccepted bool                       `json:"hasTrustDialogAccepted"`
}

// claudeSource is one settings file Claude Code reads, with what it says.
type claudeSource struct {
	kind string // "user", "project", "local", "policy", "legacy"
	s    claudeSettings
}

// claudeSources reads the settings files Claude Code merges: the user's
// (settings.json in CLAUDE_CONFIG_DIR, default ~/.claude), the project's
// .claude/settings.json and .claude/settings.local.json, the managed
// policy, and the project's record in ~/.claude.json, which older releases
// kept these keys in and newer ones move into settings.local.json. A file
// missing or unreadable says nothing. The local file is skipped where
// Claude Code skips it: when .claude or the file is a symbolic link, or
// .claude holds a .git (a clone could then have written it).
func (p Places) claudeSources(proj claudeProject) []claudeSource {
	var out []claudeSource
	read := func(kind, path string) {
		var s claudeSettings
		if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &s) == nil {
			out = append(out, claudeSource{kind, s})
		}
	}
	read("user", filepath.Join(p.claudeConfigDir(), "settings.json"))
	read("project", filepath.Join(p.Project, ".claude", "settings.json"))
	if !p.claudeLocalSuspect() {
		read("local", filepath.Join(p.Project, ".claude", "settings.local.json"))
	}
	if f := claudePolicyFile(); f != "" {
		read("policy", f)
	}
	out = append(out, claudeSource{"legacy", proj.claudeSettings})
	return out
}

// claudeConfigDir is Claude Code's folder: $CLAUDE_CONFIG_DIR, else ~/.claude.
func (p Places) claudeConfigDir() string {
	if d := p.getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	return filepath.Join(p.Home, ".claude")
}

func (p Places) claudeLocalSuspect() bool {
	dir := filepath.Join(p.Project, ".claude")
	for _, f := range []string{dir, filepath.Join(dir, "settings.local.json")} {
		if fi, err := os.Lstat(f); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return true
		}
	}
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

// claudePolicyFile is where an admin's managed settings live.
func claudePolicyFile() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-settings.json`
	}
	return "/etc/claude-code/managed-settings.json"
}

// claudeMCPJSONState is Claude Code's state of the .mcp.json server name, as
// Claude Code works it out: rejected when any settings file lists it in
// disabledMcpjsonServers; before the user accepted the project's trust
// dialog, approved only by files the repository cannot have written (the
// user's, the local one, the policy); after, by any of them.
func (p Places) claudeMCPJSONState(proj claudeProject, name string) mcpjsonState {
	sources := p.claudeSources(proj)
	for _, src := range sources {
		if slices.ContainsFunc(src.s.Disabled, func(n string) bool { return claudeSameName(n, name) }) {
			return rejected
		}
	}
	for _, src := range sources {
		if src.kind == "project" && !proj.TrustAccepted {
			continue
		}
		if src.s.EnableAll || slices.ContainsFunc(src.s.Enabled, func(n string) bool { return claudeSameName(n, name) }) {
			return approved
		}
	}
	return pending
}

// claudeSameName compares server names as Claude Code does: every
// character outside [A-Za-z0-9_-] counts as "_" (the form its tool names
// mcp__<server>__<tool> carry).
func claudeSameName(a, b string) bool { return claudeToolName(a) == claudeToolName(b) }

func claudeToolName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// claudeRunsPending says whether this Claude Code session runs a project
// server nobody answered for: an interactive one does not (it asks), one
// run with -p (or by the SDK) does. Claude Code tells its hooks which in
// CLAUDE_CODE_ENTRYPOINT ("cli" when interactive). An interactive session
// in bypassPermissions mode with skipDangerousModePermissionPrompt set runs
// them too, and a hook cannot tell that mode from the files, so then (and
// when the variable is not Claude Code's) the answer is unknown.
func (p Places) claudeRunsPending(sources []claudeSource) (runs, known bool) {
	switch p.getenv("CLAUDE_CODE_ENTRYPOINT") {
	case "cli":
		for _, src := range sources {
			if src.s.SkipBypassPrompt && src.kind != "project" {
				return false, false
			}
		}
		return false, true
	case "sdk-cli", "sdk-ts", "sdk-py":
		return true, true
	}
	return false, false
}

// geminiTrusted reports whether Gemini CLI loads the project's settings:
// GEMINI_CLI_TRUST_WORKSPACE=true or false decides; with folder trust
// turned off (security.folderTrust.enabled = false in the user's or the
// system's settings) every folder is trusted; else the rule of
// trustedFolders.json whose path is longest among those covering the
// folder decides (TRUST_FOLDER covers the folder and below, TRUST_PARENT
// its parent's tree, DO_NOT_TRUST distrusts), and no rule is untrusted.
func (p Places) geminiTrusted() bool {
	switch p.getenv("GEMINI_CLI_TRUST_WORKSPACE") {
	case "true":
		return true
	case "false":
		return false
	}
	if !p.geminiFolderTrustEnabled() {
		return true
	}
	path := p.getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
	if path == "" {
		path = filepath.Join(p.geminiHome(), ".gemini", "trustedFolders.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var rules map[string]string
	if json.Unmarshal(stripComments(data), &rules) != nil {
		return false
	}
	project := realPath(p.Project)
	best, trusted := -1, false
	for rule, level := range rules {
		covered := rule
		if level == "TRUST_PARENT" {
			covered = filepath.Dir(rule)
		}
		if !within(project, realPath(covered)) || len(rule) <= best {
			continue
		}
		best, trusted = len(rule), level == "TRUST_FOLDER" || level == "TRUST_PARENT"
	}
	return trusted
}

// geminiFolderTrustEnabled reads security.folderTrust.enabled (default
// true) from the settings Gemini CLI decides trust with: system defaults,
// the user's, the system's, the later overriding.
func (p Places) geminiFolderTrustEnabled() bool {
	enabled := true
	for _, f := range []string{p.geminiSystemDefaultsFile(), filepath.Join(p.geminiHome(), ".gemini", "settings.json"), p.geminiSystemFile()} {
		var s struct {
			Security struct {
				FolderTrust struct {
					Enabled *bool `json:"enabled"`
				} `json:"folderTrust"`
			} `json:"security"`
		}
		if data, err := os.ReadFile(f); err == nil && json.Unmarshal(stripComments(data), &s) == nil && s.Security.FolderTrust.Enabled != nil {
			enabled = *s.Security.FolderTrust.Enabled
		}
	}
	return enabled
}

// geminiHome is Gemini CLI's home: $GEMINI_CLI_HOME, else the user's.
func (p Places) geminiHome() string {
	if h := p.getenv("GEMINI_CLI_HOME"); h != "" {
		return h
	}
	return p.Home
}

// geminiSystemFile is the system settings file, which overrides the
// user's and the project's.
func (p Places) geminiSystemFile() string {
	if f := p.getenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH"); f != "" {
		return f
	}
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/GeminiCli/settings.json"
	case "windows":
		return `C:\ProgramData\gemini-cli\settings.json`
	}
	return "/etc/gemini-cli/settings.json"
}

// geminiSystemDefaultsFile is the system defaults file, which the user's
// and the project's settings override.
func (p Places) geminiSystemDefaultsFile() string {
	if f := p.getenv("GEMINI_CLI_SYSTEM_DEFAULTS_PATH"); f != "" {
		return f
	}
	return filepath.Join(filepath.Dir(p.geminiSystemFile()), "system-defaults.json")
}

// realPath resolves symbolic links where the path exists, as Gemini CLI
// compares folders.
func realPath(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// markUntrusted sets Untrusted on the project servers not approved.
func markUntrusted(servers []Server, approved func(name string) bool, why string) []Server {
	for i := range servers {
		if !approved(servers[i].Name) {
			servers[i].Untrusted = why
		}
	}
	return servers
}
