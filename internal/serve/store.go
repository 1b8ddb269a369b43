package serve

import (
	"context"
	"crypto/rand"
	"log/slog"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/telemetry"
)

// What serve keeps in Options.Store (the host's grants and session state
// it gets through host.Settings.WithStore, from the command): the
// 2026-07-28 request states, so that a retry is redeemed once on whichever
// replica it reaches, and (AuditExport) the audit records of every
// replica in one table.

// requestStates is the Signer of the 2026-07-28 request states: in the
// store when there is one, keyed by the session secret so that every
// replica holding it redeems every other's states; else in this process.
func requestStates(o Options, log *slog.Logger) *channel.Signer {
	if o.Store == nil {
		return channel.NewSigner(o.StateTTL, 4096)
	}
	secret := o.SessionSecret
	if len(secret) == 0 {
		// Only this process can redeem what it mints: right for one
		// replica, and said for several.
		secret = make([]byte, 32)
		_, _ = rand.Read(secret)
		if o.Store.Engine() == store.EnginePostgres {
			log.Warn("no [serve] session_secret_file: request states and session ids minted here are refused by every other replica; give every replica the same secret file")
		}
	}
	return channel.NewSharedSigner(channel.SharedStateKey(secret), o.StateTTL, o.Store)
}

// AuditExport is the audit sink serve's host gets (host.Settings.
// WithAuditExport): every record to the telemetry export when it is
// enabled and to the store's table when q is not nil; nil when neither.
func AuditExport(tel *telemetry.Telemetry, q *store.AuditQueue) audit.Sink {
	var sinks teeSink
	if tel.Enabled() {
		sinks = append(sinks, tel)
	}
	if q != nil {
		sinks = append(sinks, q)
	}
	switch len(sinks) {
	case 0:
		return nil
	case 1:
		return sinks[0]
	}
	return sinks
}

// teeSink hands each record to every sink in turn (none of which blocks).
type teeSink []audit.Sink

func (t teeSink) ExportAuditContext(ctx context.Context, e audit.Event) {
	for _, s := range t {
		s.ExportAuditContext(ctx, e)
	}
}
