// Command toolwarden-otelcol is the OpenTelemetry Collector the telemetry
// tests export to: the collector's own OTLP receiver (HTTP and gRPC) and
// the file exporter, which writes what it received as OTLP JSON lines, and
// nothing else. It is assembled from the collector's component modules the
// way the collector builder assembles a distribution, because no
// distribution installs with `go install` (see docs/RATIONALE.md); it is a
// module of its own so that toolwarden never links the collector.
//
// scripts/setup.sh builds it into scripts/bin; internal/telemetry/otlptest
// runs it with a config of its own (`--config FILE`).
package main

import (
	"fmt"
	"os"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func main() {
	settings := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{
			Command:     "toolwarden-otelcol",
			Description: "OTLP receiver and file exporter for toolwarden's telemetry tests",
			Version:     "0.165.0",
		},
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				// otelcol expands a bare ${VAR} through the env provider, so it must be here.
				ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
			},
		},
	}
	if err := otelcol.NewCommand(settings).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "toolwarden-otelcol:", err)
		os.Exit(1)
	}
}

// factories are the only components this collector has.
func factories() (otelcol.Factories, error) {
	receivers, err := otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	exporters, err := otelcol.MakeFactoryMap[exporter.Factory](fileexporter.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	return otelcol.Factories{
		Receivers: receivers,
		Exporters: exporters,
		Telemetry: otelconftelemetry.NewFactory(),
	}, nil
}
