package web

import (
	"log/slog"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/session"
)

// Options say what the page shows beyond the pending asks. The zero value
// (Defaults) shows asks only. Options are values: each With method returns
// a changed copy.
type Options struct {
	approvals *session.Persistent
	audit     string
	auditLog  *audit.Log
	notes     []string
	log       *slog.Logger
}

// Defaults returns options that show the pending asks only.
func Defaults() Options { return Options{} }

// WithApprovals lists (and revokes from) this "always" approvals file.
func (o Options) WithApprovals(p *session.Persistent) Options { o.approvals = p; return o }

// WithAudit shows the recent decisions of this JSON Lines audit log.
func (o Options) WithAudit(path string) Options { o.audit = path; return o }

// WithAuditLog records the page's revokes in l (the log WithAudit reads,
// so that a revoke is a row of its own).
func (o Options) WithAuditLog(l *audit.Log) Options { o.auditLog = l; return o }

// WithNote adds a line the page shows under its title (which config
// routes asks here, for instance).
func (o Options) WithNote(note string) Options {
	o.notes = append(append([]string(nil), o.notes...), note)
	return o
}

// WithLog logs what the page skips (an unreadable or oversized file in the
// rendezvous directory, once per file) to l.
func (o Options) WithLog(l *slog.Logger) Options { o.log = l; return o }
