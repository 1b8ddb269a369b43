package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/BurntSushi/toml"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// Outcome says whether an agent runs a server name, and if it does, that
// the server is known.
type Outcome int

const (
	// NotConfigured: no config file of the agent names the server.
	NotConfigured Outcome = iota
	// Runs: the agent runs Resolution.Server under that name.
	Runs
	// NotRun: the agent's config names the server but the agent will not
	// run it (a .mcp.json server the user has not approved, a project
	// config in a folder the agent does not trust, a server disabled).
	NotRun
	// Unsure: which server the agent runs under the name cannot be told
	// from its files (a config file that cannot be read, a session whose
	// mode decides between two servers).
	Unsure
)

// Resolution is the one server an agent runs for a name, or why there is
// none that can be relied on.
type Resolution struct {
	Outcome Outcome
	// Server is the server the agent runs (Outcome Runs).
	Server Server
	// Why says, for every other outcome, why in a sentence.
	Why string
}

// Resolve finds the one server agent runs under name, exactly as the agent
// resolves its configured servers:
//
//   - Claude Code: the project's entry in ~/.claude.json (local scope), else
//     the project's .mcp.json (the nearest of the project's and its parent
//     folders' that names it) if the user approved that server (or the
//     session runs unapproved ones: claude -p), else ~/.claude.json's own
//     mcpServers (user scope). A server disabled for the project (/mcp) is
//     not run. Names compare as Claude Code's tool names carry them.
//   - Gemini CLI: the last of system defaults, ~/.gemini/settings.json, the
//     project's .gemini/settings.json (only in a trusted folder, and not
//     when the project is the home folder) and the system settings, each
//     entry replacing the one before; mcp.excluded and mcp.allowed then
//     say whether it runs.
//   - Codex: /etc/codex/config.toml, $CODEX_HOME/config.toml and the
//     .codex/config.toml of each folder from the project root down to the
//     project (each only where the folder is trusted), then
//     managed_config.toml, merged key by key as Codex merges them; a
//     server with enabled = false is not run.
//
// Everything this does not know of (a plugin's servers, an IDE's trust,
// flags the agent was started with) is documented in docs/hooks.md.
func (p Places) Resolve(agent Agent, name string) Resolution {
	switch agent {
	case Claude:
		return p.resolveClaude(name)
	case Gemini:
		return p.resolveGemini(name)
	case Codex:
		return p.resolveCodex(name)
	}
	return Resolution{Outcome: Unsure, Why: fmt.Sprintf("unknown agent %q", agent)}
}

func notConfigured(agent Agent) Resolution {
	return Resolution{Outcome: NotConfigured, Why: fmt.Sprintf("it is not in %s's MCP config", agent)}
}

func unreadable(agent Agent, err error) Resolution {
	return Resolution{Outcome: Unsure, Why: fmt.Sprintf("%s's MCP config could not be read (%v), so which server it runs cannot be told", agent, err)}
}

// claudeUserFile is ~/.claude.json as far as MCP servers go.
type claudeUserFile struct {
	MCPServers map[string]json.RawMessage `json:"mcpServers"`
	Projects   map[string]claudeProject   `json:"projects"`
}

func readClaudeUser(path string) (claudeUserFile, error) {
	var top claudeUserFile
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return top, nil
	}
	if err != nil {
		return top, err
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return top, fmt.Errorf("%s: %w", path, err)
	}
	return top, nil
}

// claudeFind is the one entry of servers whose name is name as Claude
// Code compares them; two such entries make the answer unsure.
func (p Places) claudeFind(path, key string, servers map[string]json.RawMessage, name string) (*Server, error) {
	var found []Server
	for _, s := range p.entries(path, key, servers, claudeEntry) {
		if claudeSameName(s.Name, name) {
			found = append(found, s)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return &found[0], nil
	}
	return nil, fmt.Errorf("%s: %s names both %q and %q, which Claude Code's tool names do not tell apart", path, key, found[0].Name, found[1].Name)
}

func (p Places) resolveClaude(name string) Resolution {
	files := p.ConfigFiles(Claude)
	top, err := readClaudeUser(files[0])
	if err != nil {
		return unreadable(Claude, err)
	}
	proj := top.Projects[p.Project]
	if slices.ContainsFunc(proj.DisabledMCP, func(n string) bool { return claudeSameName(n, name) }) {
		return Resolution{Outcome: NotRun, Why: fmt.Sprintf("server %q is disabled for this project in Claude Code (%s: projects[%q].disabledMcpServers)", name, files[0], p.Project)}
	}
	local, err := p.claudeFind(files[0], fmt.Sprintf("projects[%q].mcpServers", p.Project), proj.MCPServers, name)
	if err != nil {
		return unreadable(Claude, err)
	}
	if local != nil {
		return Resolution{Outcome: Runs, Server: *local}
	}
	project, err := p.claudeProjectServer(name)
	if err != nil {
		return unreadable(Claude, err)
	}
	user, err := p.claudeFind(files[0], "mcpServers", top.MCPServers, name)
	if err != nil {
		return unreadable(Claude, err)
	}
	if project == nil {
		if user != nil {
			return Resolution{Outcome: Runs, Server: *user}
		}
		return notConfigured(Claude)
	}
	return p.claudeProjectOrUser(proj, *project, user, name)
}

// claudeProjectOrUser decides between a .mcp.json server and the user's
// server of the same name (if any) by the .mcp.json server's approval.
func (p Places) claudeProjectOrUser(proj claudeProject, project Server, user *Server, name string) Resolution {
	why := ""
	state := p.claudeMCPJSONState(proj, project.Name)
	if state == pending && p.TrustProject {
		state = approved
	}
	switch state {
	case approved:
		return Resolution{Outcome: Runs, Server: project}
	case rejected:
		why = fmt.Sprintf("server %q of the project's .mcp.json is rejected in Claude Code's settings (disabledMcpjsonServers)", name)
	case pending:
		runs, known := p.claudeRunsPending(p.claudeSources(proj))
		switch {
		case runs:
			return Resolution{Outcome: Runs, Server: project}
		case !known && p.startsServers:
			// Starting it takes knowing the agent runs it: not approved,
			// it is left out (--trust-project approves it).
		case !known && user != nil && !user.Spec.Identity().Equal(project.Spec.Identity()):
			return Resolution{Outcome: Unsure, Why: fmt.Sprintf("server %q is both in ~/.claude.json and, not approved, in the project's .mcp.json; which one Claude Code runs depends on how the session was started (interactive or -p), which CLAUDE_CODE_ENTRYPOINT does not say here", name)}
		case !known:
			// The .mcp.json server is the only one that can answer.
			return Resolution{Outcome: Runs, Server: project}
		}
		why = fmt.Sprintf("server %q of the project's .mcp.json has not been approved in Claude Code (approve it there, in its /mcp dialog), so this interactive session does not run it", name)
	}
	if user != nil {
		return Resolution{Outcome: Runs, Server: *user}
	}
	return Resolution{Outcome: NotRun, Why: why}
}

// claudeProjectServer is the project-scope server name: Claude Code reads
// the .mcp.json of every folder from the one below the filesystem root
// down to the project, a nearer file's entry replacing a farther one's.
func (p Places) claudeProjectServer(name string) (*Server, error) {
	var dirs []string
	for d := filepath.Clean(p.Project); filepath.Dir(d) != d; d = filepath.Dir(d) {
		dirs = append(dirs, d)
	}
	var found *Server
	for i := len(dirs) - 1; i >= 0; i-- {
		s, err := p.claudeMCPJSON(filepath.Join(dirs[i], ".mcp.json"), name)
		if err != nil {
			return nil, err
		}
		if s != nil {
			found = s
		}
	}
	return found, nil
}

func (p Places) claudeMCPJSON(path, name string) (*Server, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var top struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p.claudeFind(path, "mcpServers", top.MCPServers, name)
}

// geminiFile is one of Gemini CLI's settings files, with its servers and
// the mcp.allowed / mcp.excluded lists.
type geminiFile struct {
	MCPServers map[string]json.RawMessage `json:"mcpServers"`
	MCP        struct {
		Allowed  []string `json:"allowed"`
		Excluded []string `json:"excluded"`
	} `json:"mcp"`
}

func (p Places) resolveGemini(name string) Resolution {
	userFile := filepath.Join(p.geminiHome(), ".gemini", "settings.json")
	files := []string{p.geminiSystemDefaultsFile(), userFile}
	projectFile := filepath.Join(p.Project, ".gemini", "settings.json")
	untrusted := ""
	if realPath(p.Project) != realPath(p.geminiHome()) {
		if p.TrustProject || p.geminiTrusted() {
			files = append(files, projectFile)
		} else {
			untrusted = projectFile
		}
	}
	files = append(files, p.geminiSystemFile())
	var found *Server
	var allowed, excluded []string
	allowedSet := false
	for _, f := range files {
		g, err := readGeminiFile(f)
		if err != nil {
			return unreadable(Gemini, err)
		}
		if raw, ok := g.MCPServers[name]; ok {
			s := p.entries(f, "mcpServers", map[string]json.RawMessage{name: raw}, geminiEntry)[0]
			found = &s
		}
		if g.MCP.Allowed != nil {
			allowed, allowedSet = g.MCP.Allowed, true
		}
		if g.MCP.Excluded != nil {
			excluded = g.MCP.Excluded
		}
	}
	switch {
	case found == nil && untrusted != "":
		if g, err := readGeminiFile(untrusted); err == nil && g.MCPServers[name] != nil {
			return Resolution{Outcome: NotRun, Why: fmt.Sprintf("server %q is only in %s, which Gemini CLI does not load: the folder is not trusted (~/.gemini/trustedFolders.json)", name, untrusted)}
		}
		return notConfigured(Gemini)
	case found == nil:
		return notConfigured(Gemini)
	case slices.Contains(excluded, name):
		return Resolution{Outcome: NotRun, Why: fmt.Sprintf("server %q is in Gemini CLI's mcp.excluded", name)}
	case allowedSet && !slices.Contains(allowed, name):
		return Resolution{Outcome: NotRun, Why: fmt.Sprintf("server %q is not in Gemini CLI's mcp.allowed", name)}
	}
	return Resolution{Outcome: Runs, Server: *found}
}

func readGeminiFile(path string) (geminiFile, error) {
	var g geminiFile
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return g, nil
	}
	if err != nil {
		return g, err
	}
	if err := json.Unmarshal(stripComments(data), &g); err != nil {
		return g, fmt.Errorf("%s: %w", path, err)
	}
	return g, nil
}

func (p Places) resolveCodex(name string) Resolution {
	layers, notLoaded, err := p.codexLayers()
	if err != nil {
		return unreadable(Codex, err)
	}
	var existing []string
	for _, f := range layers {
		if _, err := os.Stat(f); err == nil {
			existing = append(existing, f)
		}
	}
	if len(existing) == 0 {
		return notConfigured(Codex)
	}
	cfg, err := config.Load(existing...)
	if err != nil {
		return unreadable(Codex, err)
	}
	s, ok := cfg.Servers[name]
	if !ok {
		for _, f := range notLoaded {
			if names, err := tomlServerNames(f); err == nil && slices.Contains(names, name) {
				return Resolution{Outcome: NotRun, Why: fmt.Sprintf("server %q is only in %s, which Codex does not load: the project is not trusted (projects.<path>.trust_level in config.toml)", name, f)}
			}
		}
		return notConfigured(Codex)
	}
	if !config.Bool(s.Enabled, true) {
		return Resolution{Outcome: NotRun, Why: fmt.Sprintf("server %q has enabled = false in Codex's config", name)}
	}
	sp, err := serverspec.FromConfig(s, p.getenv)
	if sp.URL == "" && sp.Dir == "" {
		sp.Dir = p.Project
	} else if sp.Dir != "" && !filepath.IsAbs(sp.Dir) {
		sp.Dir = filepath.Join(p.Project, sp.Dir)
	}
	return Resolution{Outcome: Runs, Server: Server{Name: name, Source: fmt.Sprintf("%s (mcp_servers.%s)", existing[len(existing)-1], name), Spec: sp, Err: err}}
}

// codexLayers are Codex's config files in the order it merges them, and
// the project files it leaves out because their folder is not trusted.
func (p Places) codexLayers() (layers, notLoaded []string, err error) {
	cp, err := p.codexProjectOf()
	if err != nil {
		return nil, nil, err
	}
	layers = append(layers, cp.base...)
	for _, dir := range cp.dirs {
		f := filepath.Join(dir, "config.toml")
		if _, err := os.Stat(f); err != nil {
			continue
		}
		level := cp.level(filepath.Dir(dir))
		if level == "trusted" || p.TrustProject && level != "untrusted" {
			layers = append(layers, f)
		} else {
			notLoaded = append(notLoaded, f)
		}
	}
	if cp.system != "" {
		layers = append(layers, filepath.Join(cp.system, "managed_config.toml"))
	}
	return layers, notLoaded, nil
}

// codexProject is what Codex knows of the project before it loads any of
// its files: the system and user configs, the trust levels and project
// root markers they record, the project root, and the project's .codex
// folders from the root down.
type codexProject struct {
	system        string   // /etc/codex, "" where there is none
	base          []string // the system and user config.toml
	trust         map[string]string
	root, gitRoot string
	dirs          []string // .codex folders, the root's first
}

// codexProjectOf reads Codex's view of the project (see codexProject).
// This is the one place that tells whether Codex trusts the project, for
// its MCP servers (Resolve) and its hooks (CodexHooks) alike.
func (p Places) codexProjectOf() (codexProject, error) {
	var cp codexProject
	if runtime.GOOS != "windows" {
		cp.system = "/etc/codex"
		cp.base = append(cp.base, filepath.Join(cp.system, "config.toml"))
	}
	user := p.ConfigFiles(Codex)[0]
	cp.base = append(cp.base, user)
	trust, markers, err := codexTrust(cp.base)
	if err != nil {
		return cp, err
	}
	cp.trust = trust
	cp.root = codexProjectRoot(p.Project, markers)
	cp.gitRoot = codexProjectRoot(p.Project, []string{".git"})
	codexHome := realPath(filepath.Dir(user))
	for _, dir := range codexDirsDown(cp.root, p.Project) {
		d := filepath.Join(dir, ".codex")
		// The user's own Codex folder is not a project layer.
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && realPath(d) != codexHome {
			cp.dirs = append(cp.dirs, d)
		}
	}
	return cp, nil
}

// level is the trust level Codex applies to the project folder dir: its
// own entry, else the project root's, else the git root's.
func (cp codexProject) level(dir string) string {
	if level, ok := cp.trust[filepath.Clean(dir)]; ok {
		return level
	}
	if level, ok := cp.trust[cp.root]; ok {
		return level
	}
	return cp.trust[cp.gitRoot]
}

// trusted says whether Codex trusts the project folder dir.
func (cp codexProject) trusted(dir string) bool { return cp.level(dir) == "trusted" }

// codexTrust reads projects.<path>.trust_level and project_root_markers
// from the files merged so far (the later winning).
func codexTrust(files []string) (map[string]string, []string, error) {
	trust := map[string]string{}
	markers := []string{".git"}
	for _, f := range files {
		var top struct {
			Projects map[string]struct {
				TrustLevel string `toml:"trust_level"`
			} `toml:"projects"`
			Markers *[]string `toml:"project_root_markers"`
		}
		if _, err := toml.DecodeFile(f, &top); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		for k, v := range top.Projects {
			if v.TrustLevel != "" {
				trust[filepath.Clean(k)] = v.TrustLevel
			}
		}
		if top.Markers != nil {
			markers = *top.Markers
		}
	}
	return trust, markers, nil
}

// codexProjectRoot is the nearest folder from dir up holding one of
// markers, else dir itself (and dir when there are no markers).
func codexProjectRoot(dir string, markers []string) string {
	for d := dir; ; d = filepath.Dir(d) {
		for _, m := range markers {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// codexDirsDown lists the folders from root down to dir.
func codexDirsDown(root, dir string) []string {
	var up []string
	for d := dir; ; d = filepath.Dir(d) {
		up = append(up, d)
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(up)
	return up
}
