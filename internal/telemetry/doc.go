// Package telemetry gives `toolwarden serve` its OpenTelemetry: a SERVER
// span per MCP request and a CLIENT span per upstream call, named and
// attributed per the OpenTelemetry GenAI MCP semantic conventions, the
// mcp.server.operation.duration and mcp.client.operation.duration
// histograms, the trace context carried through params._meta both ways,
// and the audit records exported as OTel log records.
//
// It is configured by the standard OTEL_* environment variables and is
// off (a few nanoseconds per call, no allocation) unless an exporter is
// configured. Every method is safe on a nil *Telemetry and a nil *Span, so
// a caller never guards its calls:
//
//	tel, err := telemetry.Setup(ctx, "toolwarden", version)
//	defer tel.Shutdown(ctx)
//	ctx, span := tel.StartServer(ctx, telemetry.Request{Method: "tools/call", Target: "read_file", Meta: meta})
//	span.Decision("allow", nil, digest)
//	cctx, up := tel.StartClient(ctx, "fs", req)
//	meta := telemetry.MetaMembers(cctx) // into the upstream request's _meta
//	up.End("")
//	span.End("")
package telemetry
