package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Config discovery: the files every command reads when it is given no
// --config, as Codex reads its system and user config.toml without being
// told. docs/configuration.md ("Which files are read") is the contract.

// SystemConfigDirEnv names the env var that moves the system config
// folder (default /etc/toolwarden): for tests, and for a system whose
// admin keeps it elsewhere.
const SystemConfigDirEnv = "TOOLWARDEN_SYSTEM_CONFIG_DIR"

// ConfigFileName is the name of toolwarden's config file in the system
// and user config folders.
const ConfigFileName = "config.toml"

// osGetenv is os.Getenv, for messages that name the user's own folder.
var osGetenv = os.Getenv

// Place is one file discovery looks for.
type Place struct {
	// Role is "system" or "user".
	Role string
	// Path is where it was looked for; "" when the folder itself is
	// unknown (Why says why).
	Path string
	// Present is true when the file exists (or exists and cannot be read:
	// loading it then fails, rather than running without it).
	Present bool
	// Why says why Path is "" (no home to find the user folder in).
	Why string
}

// Discover lists, in layer order (later overrides earlier), the files
// read when no --config is given: the system file
// ($TOOLWARDEN_SYSTEM_CONFIG_DIR or /etc/toolwarden, then config.toml)
// and the user file (<user config dir>/toolwarden/config.toml, where
// "toolwarden init" writes). Environment variables are read with getenv
// (nil: os.Getenv), so the places follow the environment the command
// runs in. A project's own files are never discovered: a cloned
// repository would otherwise set its own policy (see
// docs/configuration.md).
func Discover(getenv func(string) string) []Place {
	if getenv == nil {
		getenv = os.Getenv
	}
	sys := Place{Role: "system", Path: filepath.Join(SystemConfigDir(getenv), ConfigFileName)}
	user := Place{Role: "user"}
	if dir, err := UserConfigDir(getenv); err != nil {
		user.Why = err.Error()
	} else {
		user.Path = filepath.Join(dir, "toolwarden", ConfigFileName)
	}
	places := []Place{sys, user}
	for i := range places {
		places[i].Present = present(places[i].Path)
	}
	return places
}

// DiscoveredPaths are the files of Discover that are present, in layer
// order: what every command loads when given no --config.
func DiscoveredPaths(getenv func(string) string) []string {
	var out []string
	for _, p := range Discover(getenv) {
		if p.Present {
			out = append(out, p.Path)
		}
	}
	return out
}

// present reports whether path names something to load. A file that
// exists but cannot be stat'ed (a folder without search permission) is
// present too: the load then fails and says why, instead of the command
// running with less policy than the user wrote.
func present(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

// SystemConfigDir is the system config folder: $TOOLWARDEN_SYSTEM_CONFIG_DIR
// when set, else /etc/toolwarden (%ProgramData%\toolwarden on Windows).
func SystemConfigDir(getenv func(string) string) string {
	if d := getenv(SystemConfigDirEnv); d != "" {
		return d
	}
	if runtime.GOOS == "windows" {
		if d := getenv("ProgramData"); d != "" {
			return filepath.Join(d, "toolwarden")
		}
		return `C:\ProgramData\toolwarden`
	}
	return "/etc/toolwarden"
}

// UserConfigDir is os.UserConfigDir read through getenv, so that a
// command (and a test) finds the user folder of the environment it was
// given: $XDG_CONFIG_HOME (when absolute) or $HOME/.config on Unix,
// $HOME/Library/Application Support on macOS, %AppData% on Windows.
func UserConfigDir(getenv func(string) string) (string, error) {
	switch runtime.GOOS {
	case "windows":
		if d := getenv("AppData"); d != "" {
			return d, nil
		}
		return "", errors.New("%AppData% is not set")
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			return filepath.Join(h, "Library", "Application Support"), nil
		}
		return "", errors.New("$HOME is not set")
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return d, nil
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config"), nil
	}
	return "", errors.New("neither $XDG_CONFIG_HOME nor $HOME is set")
}
