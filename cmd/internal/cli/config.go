package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolwarden/toolwarden/internal/config"
)

// LoadConfig loads the config in force under the requirements in force
// (the system files, $TOOLWARDEN_REQUIREMENTS and reqs, the --requirements
// files): the paths given with --config, exactly those; with none, the
// files ConfigPaths discovers; with none of those either, the embedded
// default.
func LoadConfig(getenv func(string) string, paths, reqs []string) (*config.Config, error) {
	return config.LoadWithRequirements(config.RequirementsPaths(getenv, reqs...), ConfigPaths(getenv, paths)...)
}

// ConfigPaths are the config layers a command reads: the --config files
// when any is given (they replace discovery, so a command line says
// exactly what is in force), else the system and user files that exist
// (config.DiscoveredPaths, read through getenv). Commands that watch or
// list their config files use it too, so they name what LoadConfig read.
func ConfigPaths(getenv func(string) string, given []string) []string {
	if len(given) > 0 {
		return given
	}
	return config.DiscoveredPaths(getenv)
}

// ApprovalsPath is where "always" approvals live unless --approvals says
// otherwise: <user config dir>/toolwarden/approvals.json.
func ApprovalsPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no user config directory for the approvals file (%w); pass --approvals", err)
	}
	return filepath.Join(dir, "toolwarden", "approvals.json"), nil
}

// DisplayApprovalsPath is ApprovalsPath for a flag's help.
func DisplayApprovalsPath() string {
	p, err := ApprovalsPath()
	if err != nil {
		return "<user config dir>/toolwarden/approvals.json"
	}
	return p
}
