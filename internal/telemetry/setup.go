package telemetry

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// scope is the instrumentation scope every span, metric and log names.
const scope = "github.com/toolwarden/toolwarden/internal/serve"

// durationBuckets are the bucket boundaries, in seconds, the MCP
// conventions advise for the operation duration histograms.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Setup builds telemetry from the standard OTEL_* variables. A signal
// (traces, metrics, logs) is exported over OTLP when OTEL_<SIGNAL>_EXPORTER
// is "otlp", or when it is unset and an OTLP endpoint is
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT);
// "none" turns it off, and OTEL_SDK_DISABLED=true turns all off. The
// protocol is OTEL_EXPORTER_OTLP[_<SIGNAL>]_PROTOCOL: "http/protobuf" (the
// default) or "grpc". The exporters read the rest (endpoint, headers,
// timeout, TLS) themselves; service and version name the resource unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise.
//
// With nothing configured it returns telemetry that is off, whose calls
// cost next to nothing. An unsupported value is an error that names the
// variable, so a typo does not silently drop a team's traces.
func Setup(ctx context.Context, service, version string) (*Telemetry, error) {
	return setup(ctx, service, version, os.Getenv)
}

func setup(ctx context.Context, service, version string, getenv func(string) string) (*Telemetry, error) {
	t := &Telemetry{}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return t, nil
	}
	plans := make(map[signal]string, len(signals))
	for _, s := range signals {
		protocol, err := s.plan(getenv)
		if err != nil {
			return nil, err
		}
		if protocol != "" {
			plans[s] = protocol
		}
	}
	if len(plans) == 0 {
		return t, nil
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service), attribute.String("service.version", version)),
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: reading OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	for s, protocol := range plans {
		if err := s.start(ctx, t, res, protocol); err != nil {
			_ = t.Shutdown(ctx)
			return nil, fmt.Errorf("telemetry: %s exporter (%s): %w", s, protocol, err)
		}
	}
	return t, nil
}

// signal is one of OTel's three: "traces", "metrics", "logs".
type signal string

var signals = []signal{"traces", "metrics", "logs"}

// plan says how s is exported: "" (off), "http/protobuf" or "grpc".
func (s signal) plan(getenv func(string) string) (string, error) {
	upper := strings.ToUpper(string(s))
	exporterVar := "OTEL_" + upper + "_EXPORTER"
	want := ""
	for _, e := range strings.Split(getenv(exporterVar), ",") {
		switch e = strings.TrimSpace(e); e {
		case "":
		case "none":
			return "", nil
		case "otlp":
			want = "otlp"
		default:
			return "", fmt.Errorf("telemetry: %s=%q: toolwarden exports OpenTelemetry over OTLP only: set it to \"otlp\" or \"none\" (or unset it)", exporterVar, e)
		}
	}
	endpointVars := [...]string{"OTEL_EXPORTER_OTLP_" + upper + "_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"}
	configured := false
	for _, v := range endpointVars {
		if e := getenv(v); e != "" {
			if err := checkEndpoint(v, e); err != nil {
				return "", err
			}
			configured = true
		}
	}
	if want == "" && !configured {
		return "", nil // nothing configured: off, rather than retrying localhost forever
	}
	protocolVar := "OTEL_EXPORTER_OTLP_" + upper + "_PROTOCOL"
	protocol := strings.TrimSpace(getenv(protocolVar))
	if protocol == "" {
		protocolVar = "OTEL_EXPORTER_OTLP_PROTOCOL"
		protocol = strings.TrimSpace(getenv(protocolVar))
	}
	switch protocol {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("telemetry: %s=%q is not supported: use \"http/protobuf\" or \"grpc\"", protocolVar, protocol)
}

// checkEndpoint refuses an endpoint the exporters would not parse: they
// would log the error once and export to localhost instead, so a typo
// would drop every span with no sign at start.
func checkEndpoint(variable, endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("telemetry: %s=%q is not a URL: write it as http://HOST:PORT (or https://), e.g. http://otel-collector:4318", variable, endpoint)
	}
	return nil
}

// start builds s's exporter and provider into t.
func (s signal) start(ctx context.Context, t *Telemetry, res *resource.Resource, protocol string) error {
	grpc := protocol == "grpc"
	switch s {
	case "traces":
		var exp sdktrace.SpanExporter
		var err error
		if grpc {
			exp, err = otlptracegrpc.New(ctx)
		} else {
			exp, err = otlptracehttp.New(ctx)
		}
		if err != nil {
			return err
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		t.shutdown = append(t.shutdown, tp.Shutdown)
		t.tracer = tp.Tracer(scope)
	case "metrics":
		var exp sdkmetric.Exporter
		var err error
		if grpc {
			exp, err = otlpmetricgrpc.New(ctx)
		} else {
			exp, err = otlpmetrichttp.New(ctx)
		}
		if err != nil {
			return err
		}
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		t.shutdown = append(t.shutdown, mp.Shutdown)
		return t.instruments(mp.Meter(scope))
	case "logs":
		var exp sdklog.Exporter
		var err error
		if grpc {
			exp, err = otlploggrpc.New(ctx)
		} else {
			exp, err = otlploghttp.New(ctx)
		}
		if err != nil {
			return err
		}
		lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)), sdklog.WithResource(res))
		t.shutdown = append(t.shutdown, lp.Shutdown)
		t.logger = lp.Logger(scope)
	}
	return nil
}

// instruments creates the two duration histograms the conventions name.
func (t *Telemetry) instruments(m metric.Meter) error {
	var err error
	t.serverDur, err = m.Float64Histogram("mcp.server.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("The duration of an MCP request as observed on the receiver, from receipt until the response is sent."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		return err
	}
	t.clientDur, err = m.Float64Histogram("mcp.client.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("The duration of an MCP request as observed on the sender, from sending until the response is received."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	return err
}
