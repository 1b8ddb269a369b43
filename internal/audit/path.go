package audit

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
)

// FileName is the log's name in its directory.
const FileName = "audit.jsonl"

// DefaultPath is where every toolwarden process of this user writes its
// decision log, and where the inbox reads it, unless a config's [audit]
// table or --audit says otherwise: <home>/.local/state/toolwarden on Linux
// and other Unixes, <home>/Library/Logs/toolwarden on macOS,
// %LocalAppData%\toolwarden on Windows.
//
// It depends on the home directory only: agents start MCP servers with a
// few variables (Codex and the TypeScript SDK pass HOME, PATH, USER and
// little else), so a place read from XDG_STATE_HOME would differ between a
// wrapped server and an inbox started from a terminal.
//
// getenv reads the environment (os.Getenv, or a test's).
func DefaultPath(getenv func(string) string) (string, error) {
	if runtime.GOOS == "windows" {
		if dir := getenv("LocalAppData"); filepath.IsAbs(dir) {
			return filepath.Join(dir, "toolwarden", FileName), nil
		}
	}
	home, err := Home(getenv)
	if err != nil {
		return "", err
	}
	switch runtime.GOOS {
	case "darwin", "ios":
		return filepath.Join(home, "Library", "Logs", "toolwarden", FileName), nil
	case "windows":
		return filepath.Join(home, "AppData", "Local", "toolwarden", FileName), nil
	}
	return filepath.Join(home, ".local", "state", "toolwarden", FileName), nil
}

// Home is the user's home: $HOME (%USERPROFILE%) of getenv, else of the
// process, else the account's entry, for a process started with an empty
// environment.
func Home(getenv func(string) string) (string, error) {
	v := "HOME"
	if runtime.GOOS == "windows" {
		v = "USERPROFILE"
	}
	if home := getenv(v); filepath.IsAbs(home) {
		return home, nil
	}
	// A command given an environment without HOME (a test's, in process)
	// falls back to its process's, then to the account's entry.
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		return home, nil
	}
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) {
		return u.HomeDir, nil
	}
	return "", errors.New("audit: no home directory for the audit log (HOME is not set and the account has none): set [audit] path in the config or pass --audit FILE")
}
