package hook

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A project's own MCP config (.mcp.json, .gemini/settings.json) comes
// with the repository, so starting its servers runs whatever a clone
// says. The agents themselves start them only once the user trusted
// them; tools sync does the same, and marks the others Untrusted.

// claudeApproved reports whether Claude Code would start the project
// server name: approved in ~/.claude.json's entry for the project
// (enabledMcpjsonServers, or enableAllProjectMcpServers there or in the
// project's .claude/settings.local.json), and not disabled.
func (p Places) claudeApproved(userFile, name string) bool {
	var top struct {
		Projects map[string]claudeProject `json:"projects"`
	}
	if data, err := os.ReadFile(userFile); err != nil || json.Unmarshal(data, &top) != nil {
		return false
	}
	proj := top.Projects[p.Project]
	if slices.Contains(proj.Disabled, name) {
		return false
	}
	if slices.Contains(proj.Enabled, name) || proj.EnableAll {
		return true
	}
	var local struct {
		EnableAll bool `json:"enableAllProjectMcpServers"`
	}
	data, err := os.ReadFile(filepath.Join(p.Project, ".claude", "settings.local.json"))
	return err == nil && json.Unmarshal(data, &local) == nil && local.EnableAll
}

type claudeProject struct {
	Enabled   []string `json:"enabledMcpjsonServers"`
	Disabled  []string `json:"disabledMcpjsonServers"`
	EnableAll bool     `json:"enableAllProjectMcpServers"`
}

// geminiTrusted reports whether the user trusted the project folder in
// Gemini CLI (~/.gemini/trustedFolders.json: a folder marked TRUST_FOLDER
// covers itself and what is below it, TRUST_PARENT its parent's tree).
func (p Places) geminiTrusted() bool {
	data, err := os.ReadFile(filepath.Join(p.Home, ".gemini", "trustedFolders.json"))
	if errors.Is(err, fs.ErrNotExist) || err != nil {
		return false
	}
	var rules map[string]string
	if json.Unmarshal(stripComments(data), &rules) != nil {
		return false
	}
	trusted := false
	for path, rule := range rules {
		switch rule {
		case "DO_NOT_TRUST":
			if within(p.Project, path) {
				return false
			}
		case "TRUST_FOLDER":
			trusted = trusted || within(p.Project, path)
		case "TRUST_PARENT":
			trusted = trusted || within(p.Project, filepath.Dir(path))
		}
	}
	return trusted
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
