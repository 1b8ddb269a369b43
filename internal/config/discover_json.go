package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// jsonFileDiagnostic is the one error for a layer that is JSON, not TOML:
// most often an agent's own settings (~/.claude.json, .mcp.json, Gemini
// CLI's settings.json) given to --config, where ten TOML syntax errors
// would hide what went wrong. ok is false for anything else, which is
// then reported as TOML.
func jsonFileDiagnostic(file string, data []byte) (Diagnostic, bool) {
	if !looksLikeJSON(data) {
		return Diagnostic{}, false
	}
	whose := "an agent's JSON settings file"
	switch base := filepath.Base(file); {
	case base == ".claude.json" || base == ".mcp.json":
		whose = "Claude Code's JSON settings file"
	case base == "settings.json" && strings.Contains(filepath.ToSlash(file), ".gemini/"):
		whose = "Gemini CLI's JSON settings file"
	case base == "settings.json" && strings.Contains(filepath.ToSlash(file), ".claude/"):
		whose = "Claude Code's JSON settings file"
	}
	return Diagnostic{
		Pos: Position{File: file, Line: 1, Col: 1},
		Message: "this is " + whose + ", not a toolwarden config (toolwarden reads TOML): " +
			"give --config the file \"toolwarden init\" wrote (" + userConfigHint() + "), or Codex's ~/.codex/config.toml, " +
			"or no --config at all to read the system and user files; " +
			"\"toolwarden init --write-agents\" puts the MCP servers this file lists behind toolwarden",
	}, true
}

// looksLikeJSON reports whether data is a JSON document (with the
// comments Gemini CLI and Claude Code allow) rather than TOML. A TOML
// document never starts with "{" or "//" (its comments start with "#"),
// so that is enough; one starting with "[" is a table header unless the
// whole text is JSON.
func looksLikeJSON(data []byte) bool {
	t := skipJSONComments(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(t) == 0 {
		return false
	}
	switch t[0] {
	case '{':
		return true
	case '[':
		return json.Valid(t)
	}
	return false
}

// skipJSONComments drops leading space and // or /* */ comments.
func skipJSONComments(t []byte) []byte {
	for {
		t = bytes.TrimSpace(t)
		switch {
		case bytes.HasPrefix(t, []byte("//")):
			i := bytes.IndexByte(t, '\n')
			if i < 0 {
				return nil
			}
			t = t[i+1:]
		case bytes.HasPrefix(t, []byte("/*")):
			i := bytes.Index(t[2:], []byte("*/"))
			if i < 0 {
				return nil
			}
			t = t[i+4:]
		default:
			return t
		}
	}
}

// userConfigHint is where init writes the user file, for messages.
func userConfigHint() string {
	dir, err := UserConfigDir(osGetenv)
	if err != nil {
		return fmt.Sprintf("<user config dir>/toolwarden/%s", ConfigFileName)
	}
	return filepath.Join(dir, "toolwarden", ConfigFileName)
}
