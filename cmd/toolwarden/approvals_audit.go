package main

import (
	"fmt"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/session"
)

// A revoke changes what the next call is asked, so it belongs in the
// decision log next to the calls it affects: the inbox shows it as a row.

// approvalsAudit opens the log a revoke is recorded in: --audit, else the
// [audit] table of the config in force, else the default. A config that
// does not load, or a log that cannot be opened, is a warning: the revoke
// itself must not wait on the log.
func (a *approvalsCmd) approvalsAudit() (*audit.Log, func()) {
	warn := func(msg string) { fmt.Fprintf(a.e.stderr, "toolwarden approvals: warning: %s\n", msg) }
	cfg, err := loadConfig(a.e, nil, nil)
	if err != nil {
		warn(fmt.Sprintf("the config does not load (%v); the revoke is recorded in the default audit log", err))
		cfg = nil
	}
	f, err := openAuditLog(a.e, a.audit, cfg, warn)
	if err != nil {
		warn(fmt.Sprintf("the revoke is not audited: %v", err))
		return nil, func() {}
	}
	if f == nil {
		return nil, func() {}
	}
	return audit.New(f), func() { f.Close() }
}

// auditRevoked records each revoked approval.
func (a *approvalsCmd) auditRevoked(revoked []session.ApprovalKey) {
	log, done := a.approvalsAudit()
	defer done()
	for _, k := range revoked {
		log.WriteEvent("", audit.Revoke{Server: k.Server, Tool: k.Tool, App: k.App, Connector: k.Connector, DefinitionHash: k.Hash, File: a.file, By: "cli"})
	}
}

// auditRevokedAll records a reset: every approval of the file revoked.
func (a *approvalsCmd) auditRevokedAll() {
	log, done := a.approvalsAudit()
	defer done()
	log.WriteEvent("", audit.Revoke{All: true, File: a.file, By: "cli"})
}
