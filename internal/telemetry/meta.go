package telemetry

import (
	"bytes"
	"context"
	"encoding/json"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// The W3C trace context and baggage travel unprefixed in params._meta
// (SEP-414; the MCP semantic conventions). The propagators are ours, not
// the global ones, so a library that sets the global cannot change what
// serve reads or writes.
var metaPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// extractMeta returns ctx with the remote span context carried in meta
// (params._meta), and whether there was a valid one. A malformed _meta or
// traceparent is ignored: telemetry never fails a request.
func extractMeta(ctx context.Context, meta json.RawMessage) (context.Context, bool) {
	meta = bytes.TrimSpace(meta)
	if len(meta) == 0 || meta[0] != '{' || !bytes.Contains(meta, []byte("traceparent")) {
		return ctx, false
	}
	// Only the three propagation members are decoded; a member of another
	// type makes the whole _meta unusable as a trace context.
	var fields struct {
		Traceparent, Tracestate, Baggage string
	}
	if json.Unmarshal(meta, &fields) != nil || fields.Traceparent == "" {
		return ctx, false
	}
	carrier := propagation.MapCarrier{"traceparent": fields.Traceparent}
	if fields.Tracestate != "" {
		carrier["tracestate"] = fields.Tracestate
	}
	if fields.Baggage != "" {
		carrier["baggage"] = fields.Baggage
	}
	out := metaPropagator.Extract(ctx, carrier)
	sc := trace.SpanContextFromContext(out)
	return out, sc.IsValid() && sc.IsRemote()
}

// MetaMembers returns the _meta members (traceparent, and tracestate when
// there is one) that hand the span context of ctx to a peer, for a caller
// that builds the request itself (upstream.WithMeta); nil with no span in
// ctx.
func MetaMembers(ctx context.Context) map[string]string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	metaPropagator.Inject(ctx, carrier)
	if len(carrier) == 0 {
		return nil
	}
	return carrier
}
