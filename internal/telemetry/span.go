package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Request is what a span says about one MCP request. Target is the tool
// name for tools/call, the prompt name for prompts/get and the resource
// URI for resources/read, resources/subscribe and resources/unsubscribe;
// only a tool or prompt name goes into the span name (a URI would give
// every read a name of its own). SessionID is the Mcp-Session-Id of a
// 2025-era session, empty under 2026-07-28. RequestID is the JSON-RPC id
// as it came; Meta is params._meta, where the caller's traceparent is.
type Request struct {
	Method, Target, ProtocolVersion, SessionID string
	RequestID                                  json.RawMessage
	Meta                                       json.RawMessage
}

// The attribute keys, as the GenAI MCP semantic conventions name them.
const (
	keyMethod       = attribute.Key("mcp.method.name")
	keyToolName     = attribute.Key("gen_ai.tool.name")
	keyPromptName   = attribute.Key("gen_ai.prompt.name")
	keyResourceURI  = attribute.Key("mcp.resource.uri")
	keyOperation    = attribute.Key("gen_ai.operation.name")
	keyProtocol     = attribute.Key("mcp.protocol.version")
	keySession      = attribute.Key("mcp.session.id")
	keyRequestID    = attribute.Key("jsonrpc.request.id")
	keyErrorType    = attribute.Key("error.type")
	keyRPCStatus    = attribute.Key("rpc.response.status_code")
	keyUpstream     = attribute.Key("toolwarden.server")
	keyDecision     = attribute.Key("toolwarden.decision")
	keyReasonCodes  = attribute.Key("toolwarden.reason_codes")
	keyPolicyDigest = attribute.Key("toolwarden.policy_digest")
	// The decision also as the GenAI guardrails convention's result event,
	// so a backend that knows guardrails shows it without knowing toolwarden.
	guardrailEvent        = "gen_ai.guardrail.result"
	keyGuardrailComponent = attribute.Key("gen_ai.guardrail.component.name")
	keyGuardrailSource    = attribute.Key("gen_ai.guardrail.source")
	keyGuardrailType      = attribute.Key("gen_ai.guardrail.result.type")
	keyGuardrailValue     = attribute.Key("gen_ai.guardrail.result.value")
	keyGuardrailPolicy    = attribute.Key("gen_ai.guardrail.policy.id")
)

// Span is one SERVER or CLIENT span and the duration it records when it
// ends. A nil *Span (telemetry off) does nothing.
type Span struct {
	span  trace.Span
	dur   metric.Float64Histogram
	start time.Time
	attrs []attribute.KeyValue // the metric's attributes, shared with the span
}

// StartServer starts the SERVER span of a request serve received. Its
// parent is the trace context in r.Meta (the client's traceparent), so a
// client's trace continues through the gateway; any span already in ctx
// (an HTTP server span) is linked, not parented, as the conventions say.
func (t *Telemetry) StartServer(ctx context.Context, r Request) (context.Context, *Span) {
	if !t.Enabled() {
		return ctx, nil
	}
	var opts []trace.SpanStartOption
	if parent, ok := extractMeta(ctx, r.Meta); ok {
		if ambient := trace.SpanContextFromContext(ctx); ambient.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: ambient}))
		}
		ctx = parent
	}
	return t.start(ctx, r, trace.SpanKindServer, t.serverDur, nil, opts)
}

// StartClient starts the CLIENT span of serve's call to the upstream
// named server, a child of the span in ctx. Put MetaMembers of its context
// in the upstream request's _meta so the upstream's own span is a child
// of this one.
func (t *Telemetry) StartClient(ctx context.Context, server string, r Request) (context.Context, *Span) {
	if !t.Enabled() {
		return ctx, nil
	}
	extra := []attribute.KeyValue{keyUpstream.String(server)}
	return t.start(ctx, r, trace.SpanKindClient, t.clientDur, extra, nil)
}

func (t *Telemetry) start(ctx context.Context, r Request, kind trace.SpanKind, dur metric.Float64Histogram, extra []attribute.KeyValue, opts []trace.SpanStartOption) (context.Context, *Span) {
	s := &Span{dur: dur, start: time.Now(), attrs: requestAttributes(r, extra)}
	if t.tracer == nil {
		return ctx, s
	}
	spanAttrs := s.attrs
	if id, ok := requestID(r.RequestID); ok {
		spanAttrs = append(spanAttrs[:len(spanAttrs):len(spanAttrs)], keyRequestID.String(id))
	}
	if r.SessionID != "" {
		spanAttrs = append(spanAttrs[:len(spanAttrs):len(spanAttrs)], keySession.String(r.SessionID))
	}
	opts = append(opts, trace.WithSpanKind(kind), trace.WithAttributes(spanAttrs...), trace.WithTimestamp(s.start))
	ctx, s.span = t.tracer.Start(ctx, spanName(r), opts...)
	return ctx, s
}

// spanName is "{mcp.method.name} {target}" for a tool or a prompt, the
// method alone otherwise.
func spanName(r Request) string {
	if r.Target != "" && (r.Method == "tools/call" || r.Method == "prompts/get") {
		return r.Method + " " + r.Target
	}
	return r.Method
}

// requestAttributes are the attributes both the span and the duration
// metric carry: low-cardinality ones only (no ids, no URIs on metrics).
func requestAttributes(r Request, extra []attribute.KeyValue) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 6+len(extra))
	a = append(a, keyMethod.String(r.Method))
	if r.ProtocolVersion != "" {
		a = append(a, keyProtocol.String(r.ProtocolVersion))
	}
	switch r.Method {
	case "tools/call":
		a = append(a, keyOperation.String("execute_tool"))
		if r.Target != "" {
			a = append(a, keyToolName.String(r.Target))
		}
	case "prompts/get":
		if r.Target != "" {
			a = append(a, keyPromptName.String(r.Target))
		}
	}
	return append(a, extra...)
}

// requestID is the conventions' string form of a JSON-RPC id: a string's
// text, a number as written; none for null or an absent id.
func requestID(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	}
	return string(raw), true
}

// Decision records the policy's verdict ("allow", "ask" or "deny"), its
// reason codes and the digest of the policy that decided, as toolwarden.*
// attributes of the span and as a gen_ai.guardrail.result event on it
// (result type "decision", toolwarden's own name for the field; source
// "tool_input"). Argument values are never recorded.
func (s *Span) Decision(verdict string, reasonCodes []string, policyDigest string) {
	if s == nil || s.span == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 3)
	attrs = append(attrs, keyDecision.String(verdict))
	if len(reasonCodes) > 0 {
		attrs = append(attrs, keyReasonCodes.StringSlice(reasonCodes))
	}
	if policyDigest != "" {
		attrs = append(attrs, keyPolicyDigest.String(policyDigest))
	}
	s.span.SetAttributes(attrs...)
	event := []attribute.KeyValue{
		keyGuardrailComponent.String("toolwarden"),
		keyGuardrailSource.String("tool_input"),
		keyGuardrailType.String("decision"),
		keyGuardrailValue.String(verdict),
	}
	if policyDigest != "" {
		event = append(event, keyGuardrailPolicy.String(policyDigest))
	}
	s.span.AddEvent(guardrailEvent, trace.WithAttributes(event...))
}

// SetResourceURI records mcp.resource.uri on the span (never on the
// metric, where every URI would be a series of its own).
func (s *Span) SetResourceURI(uri string) {
	if s == nil || s.span == nil || uri == "" {
		return
	}
	s.span.SetAttributes(keyResourceURI.String(uri))
}

// End ends the span and records its duration. errorType is "" for
// success, "tool_error" for a result with isError, a JSON-RPC error code
// ("-32602") or another low-cardinality class ("timeout", "denied"); the
// span's status is then ERROR.
func (s *Span) End(errorType string) {
	if s == nil {
		return
	}
	end := time.Now()
	attrs := s.attrs
	if errorType != "" {
		attrs = append(attrs[:len(attrs):len(attrs)], keyErrorType.String(errorType))
		if _, err := strconv.Atoi(errorType); err == nil {
			attrs = append(attrs, keyRPCStatus.String(errorType))
		}
	}
	if s.dur != nil {
		s.dur.Record(context.Background(), end.Sub(s.start).Seconds(), metric.WithAttributes(attrs...))
	}
	if s.span == nil {
		return
	}
	if errorType != "" {
		s.span.SetAttributes(attrs[len(s.attrs):]...)
		s.span.SetStatus(codes.Error, errorType)
	}
	s.span.End(trace.WithTimestamp(end))
}
