package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/toolwarden/toolwarden/internal/config"
)

// LoadConfig loads the given layers, or the embedded default, under the
// requirements in force: the system files, $TOOLWARDEN_REQUIREMENTS and
// reqs (the --requirements files).
func LoadConfig(getenv func(string) string, paths, reqs []string) (*config.Config, error) {
	return config.LoadWithRequirements(config.RequirementsPaths(getenv, reqs...), paths...)
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
