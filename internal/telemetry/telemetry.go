package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Telemetry holds the tracer, meters and logger serve reports through. The
// zero value and nil are both "off": every method then returns at once.
type Telemetry struct {
	tracer    trace.Tracer            // nil when traces are not exported
	serverDur metric.Float64Histogram // nil when metrics are not exported
	clientDur metric.Float64Histogram
	logger    log.Logger // nil when logs are not exported

	shutdownOnce sync.Once
	shutdownErr  error
	shutdown     []func(context.Context) error // providers, flushed in order
}

// flushTimeout bounds Shutdown when the caller's context has no deadline.
const flushTimeout = 5 * time.Second

// Enabled reports whether any signal is exported.
func (t *Telemetry) Enabled() bool {
	return t != nil && (t.tracer != nil || t.serverDur != nil || t.logger != nil)
}

// Shutdown flushes what is buffered to the collector and stops the
// exporters; later calls return the first call's error. A collector that
// cannot be reached costs at most ctx's deadline, never a hang.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.shutdownOnce.Do(func() {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, flushTimeout)
			defer cancel()
		}
		var errs []error
		for _, f := range t.shutdown {
			errs = append(errs, f(ctx))
		}
		t.shutdownErr = errors.Join(errs...)
	})
	return t.shutdownErr
}
