package telemetry

import (
	"context"
	"encoding/json"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"

	"github.com/toolwarden/toolwarden/internal/audit"
)

// ExportAudit sends an audit record as an OTel log record: the body is the
// record's JSON, exactly the line the JSON Lines log holds (that schema is
// the contract, so a SIEM reads one shape from either), with event.name
// and toolwarden.session as attributes to filter on. e is an audit.Record
// (the engine's check, observe, approve records) or a front end's Event.
func (t *Telemetry) ExportAudit(e audit.Event) {
	t.ExportAuditContext(context.Background(), e)
}

// ExportAuditContext is ExportAudit for a record written inside a span:
// the log record carries the span's trace and span ids.
func (t *Telemetry) ExportAuditContext(ctx context.Context, e audit.Event) {
	if t == nil || t.logger == nil || e == nil {
		return
	}
	rec, ok := e.(audit.Record)
	if !ok {
		if p, isPtr := e.(*audit.Record); isPtr && p != nil {
			rec, ok = *p, true
		}
	}
	if !ok {
		rec = audit.Record{Time: time.Now().UTC(), Event: e.Name(), Decision: e}
	}
	body, err := json.Marshal(rec)
	if err != nil {
		body, _ = json.Marshal(map[string]string{"event": rec.Event, "error": "audit record not encodable: " + err.Error()})
	}
	var r log.Record
	r.SetTimestamp(rec.Time)
	r.SetObservedTimestamp(time.Now())
	r.SetSeverity(log.SeverityInfo)
	r.SetSeverityText("INFO")
	r.SetEventName("toolwarden.audit." + rec.Event)
	r.SetBody(attribute.StringValue(string(body)))
	r.AddAttributes(attribute.String("toolwarden.audit.event", rec.Event))
	if rec.Session != "" {
		r.AddAttributes(attribute.String("toolwarden.session", rec.Session))
	}
	t.logger.Emit(ctx, r)
}
