package hook

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/BurntSushi/toml"
)

// Named is what Resolve answered for one server name.
type Named struct {
	Name string
	Resolution
}

// RunningServers resolves every server name any of agent's config files
// holds (every layer Resolve reads, and the project files it leaves out),
// each with Resolve: the servers the agent really runs (Outcome Runs, with
// Server.Agent set), and for every other name why not. This is what tools
// sync starts, so that the catalog gets an entry for each server the agent
// runs (a trusted project's included) and none for a server it will not
// run. Names come sorted; a config file that cannot be read is an error
// and its names are missing.
func (p Places) RunningServers(agent Agent) ([]Named, []error) {
	p.startsServers = true
	names, errs := p.configuredNames(agent)
	out := make([]Named, 0, len(names))
	for _, n := range names {
		r := p.Resolve(agent, n)
		r.Server.Agent = agent
		out = append(out, Named{Name: n, Resolution: r})
	}
	return out, errs
}

// configuredNames are the server names of every file agent may read, once
// each as the agent compares names.
func (p Places) configuredNames(agent Agent) ([]string, []error) {
	var names []string
	var errs []error
	add := func(keys []string, err error) {
		if err != nil {
			errs = append(errs, err)
		}
		names = append(names, keys...)
	}
	switch agent {
	case Claude:
		top, err := readClaudeUser(p.ConfigFiles(Claude)[0])
		add(mapKeys(top.MCPServers), err)
		add(mapKeys(top.Projects[p.Project].MCPServers), nil)
		for d := filepath.Clean(p.Project); filepath.Dir(d) != d; d = filepath.Dir(d) {
			add(jsonServerNames(filepath.Join(d, ".mcp.json")))
		}
	case Gemini:
		for _, f := range []string{p.geminiSystemDefaultsFile(), filepath.Join(p.geminiHome(), ".gemini", "settings.json"), filepath.Join(p.Project, ".gemini", "settings.json"), p.geminiSystemFile()} {
			g, err := readGeminiFile(f)
			add(mapKeys(g.MCPServers), err)
		}
	case Codex:
		layers, notLoaded, err := p.codexLayers()
		add(nil, err)
		for _, f := range append(layers, notLoaded...) {
			add(tomlServerNames(f))
		}
	}
	return uniqueNames(agent, names), errs
}

// uniqueNames sorts names and keeps one of those the agent does not tell
// apart (Claude Code compares them as its tool names carry them).
func uniqueNames(agent Agent, names []string) []string {
	slices.Sort(names)
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		key := n
		if agent == Claude {
			key = claudeToolName(n)
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, n)
		}
	}
	return out
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func jsonServerNames(path string) ([]string, error) {
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
		return nil, errors.New(path + ": " + err.Error())
	}
	return mapKeys(top.MCPServers), nil
}

func tomlServerNames(path string) ([]string, error) {
	var top struct {
		MCPServers map[string]any `toml:"mcp_servers"`
	}
	if _, err := toml.DecodeFile(path, &top); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, errors.New(path + ": " + err.Error())
	}
	return mapKeys(top.MCPServers), nil
}
