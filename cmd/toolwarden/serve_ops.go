package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/serve"
)

// serve's operations: the HTTP server's bounds, graceful shutdown and
// live config changes (docs/serve.md, "Operating serve").

// opsFlags are serve's flags for running it as a service.
type opsFlags struct {
	grace       time.Duration
	readTimeout time.Duration
}

// addOpsFlags defines --shutdown-grace, --read-timeout and --no-watch
// (into sf) on fs.
func addOpsFlags(fs *cli.Flags, sf *cli.ServeFlags) *opsFlags {
	o := &opsFlags{}
	fs.BoolVar(&sf.NoWatch, "no-watch", false, "do not apply changes of the --config files (and the plugins they name) while running; SIGHUP still reloads")
	fs.DurationVar(&o.grace, "shutdown-grace", serve.DefaultGrace,
		"on SIGTERM or SIGINT, how long calls in flight have to finish before they are cancelled (a second signal cancels them at once)")
	fs.DurationVar(&o.readTimeout, "read-timeout", serve.DefaultReadTimeout,
		"how long a client has to send a request's headers, and again its body; a slower one is cut off (answers are not bounded: a call may wait for a human)")
	return o
}

// check refuses values that would make serve unbounded or unstoppable.
func (o *opsFlags) check() error {
	if o.grace <= 0 {
		return fmt.Errorf("--shutdown-grace %s: must be more than 0", o.grace)
	}
	if o.readTimeout <= 0 {
		return fmt.Errorf("--read-timeout %s: must be more than 0", o.readTimeout)
	}
	return nil
}

// servingFront is serve's HTTP front running on a listener.
type servingFront struct {
	front  *serve.Front
	addr   net.Addr
	served chan error
	grace  time.Duration
}

// startFront starts serving srv on l, with the bounds of o, at once (the
// probes answer while the upstreams start).
func startFront(srv *serve.Server, l net.Listener, o *opsFlags, log *slog.Logger) *servingFront {
	sf := &servingFront{
		front:  srv.Front(serve.FrontOptions{ReadTimeout: o.readTimeout, Grace: o.grace, Logger: log}),
		addr:   l.Addr(),
		served: make(chan error, 1),
		grace:  o.grace,
	}
	go func() { sf.served <- sf.front.Serve(l) }()
	return sf
}

// untilSignal serves until ctx is done (the first SIGTERM or SIGINT),
// then shuts down: no new connections, the calls in flight finish within
// the grace period or are cancelled, then the upstreams stop. A second
// signal during the grace period cancels the calls at once.
func (sf *servingFront) untilSignal(ctx context.Context, e *env) error {
	select {
	case err := <-sf.served:
		if err != nil {
			return fmt.Errorf("serving on %s: %w", sf.addr, err)
		}
		return nil
	case <-ctx.Done():
	}
	fmt.Fprintf(e.stderr, "toolwarden serve: shutting down: no new connections; calls in flight have %s to finish (send the signal again to cancel them now)\n", sf.grace)
	again, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := sf.front.Shutdown(again)
	<-sf.served
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("shutting down: %w", err)
	}
	fmt.Fprintln(e.stderr, "toolwarden serve: stopped")
	return nil
}

// watchServe applies changes of serve's config files (and the plugins they
// name) as proxy does (watch.go): on every settled change unless
// --no-watch, and on SIGHUP. apply is the Server's reload; a config that
// does not load, or that apply refuses, is refused loudly and the running
// policy keeps deciding. The returned function stops watching.
func watchServe(ctx context.Context, e *env, sf *serveFlags, h *host.Host, apply func(context.Context, *config.Config) error) (stop func()) {
	return watchConfig(ctx, &liveConfig{
		cmd: "serve", configs: cli.ConfigPaths(e.getenv, sf.Configs), reqs: config.RequirementsPaths(e.getenv, sf.Requirements...),
		h: h, apply: apply, stderr: e.stderr, log: sf.logger(e),
	}, !sf.NoWatch)
}
