package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/config"
)

// auditOff is the --audit value that turns the log off for one command.
const auditOff = "off"

// auditFlagUsage is the --audit flag's help in every command that writes
// or reads the log.
const auditFlagUsage = "the decision log (JSON Lines) every wrap, proxy and hook of yours appends to and the inbox reads (default: [audit] path of the config, else <home>/.local/state/toolwarden/audit.jsonl; \"off\": none)"

// auditTarget is where a command's decision log goes, as --audit and the
// config's [audit] table say: Path "" when the log is off. Explicit says
// the user named it (a flag or the config), so failing to open it is an
// error rather than a warning.
type auditTarget struct {
	Path     string
	Rotation audit.Rotation
	Explicit bool
}

// auditTargetOf resolves the log: --audit wins (a path, or "off"), then
// the config's [audit] table, then audit.DefaultPath.
func auditTargetOf(e *env, flag string, cfg *config.Config) (auditTarget, error) {
	t := auditTarget{Rotation: audit.DefaultRotation}
	var a config.Audit
	if cfg != nil && cfg.Audit != nil {
		a = *cfg.Audit
	}
	if a.MaxSizeMiB > 0 {
		t.Rotation.MaxBytes = int64(a.MaxSizeMiB * (1 << 20))
	}
	if a.Keep > 0 {
		t.Rotation.Keep = a.Keep
	}
	switch {
	case flag == auditOff:
		return auditTarget{}, nil
	case flag != "":
		t.Path, t.Explicit = flag, true
		return t, nil
	case a.Disabled:
		return auditTarget{}, nil
	case a.Path != "":
		p, err := auditExpandHome(e, a.Path)
		t.Path, t.Explicit = p, true
		return t, err
	}
	p, err := audit.DefaultPath(e.getenv)
	t.Path = p
	return t, err
}

// auditExpandHome writes a config's "~/..." with the user's home.
func auditExpandHome(e *env, p string) (string, error) {
	rest, ok := strings.CutPrefix(p, "~/")
	if !ok {
		return p, nil
	}
	home, err := audit.Home(e.getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, rest), nil
}

// openAuditLog opens the decision log for a command that decides (wrap,
// proxy, hook): nil when it is off. A log the user named that cannot be
// opened is an error; the default one that cannot be opened is a warning
// to warn, and the command decides without it (the log records decisions,
// it never makes them).
func openAuditLog(e *env, flag string, cfg *config.Config, warn func(string)) (*audit.File, error) {
	t, err := auditTargetOf(e, flag, cfg)
	if err == nil && t.Path == "" {
		return nil, nil
	}
	var f *audit.File
	if err == nil {
		f, err = audit.OpenFile(t.Path, t.Rotation)
	}
	if err != nil && !t.Explicit {
		warn(fmt.Sprintf("no audit log: %v", err))
		return nil, nil
	}
	return f, err
}
