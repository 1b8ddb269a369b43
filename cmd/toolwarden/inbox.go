package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/inbox/web"
	"github.com/toolwarden/toolwarden/internal/session"
)

func init() {
	register(command{name: "inbox", summary: "serve the approval inbox: answer pending asks in a browser", run: runInbox})
}

const inboxSynopsis = "inbox [--config F] [--approvals F] [--audit F] [--addr 127.0.0.1:0] [--open=false]"

const inboxAbout = `Serves a page on a loopback address where you see every pending ask of every
toolwarden process of yours on this machine (wrap, proxy, hook and sdk hosts
whose approval_channel is "inbox" or "both") and answer it with the options
the prompt offers; the first answer from any channel wins. The page also lists
the standing ("always") approvals of --approvals, revokes them in one click
(each revoke is recorded in the audit log), and shows the recent calls of the
audit log every wrap, proxy and hook of yours writes, one row per call with
how it ended.

The address it prints carries a per-run token: whoever has it can answer asks.
The page listens on loopback only, accepts only its own Host and Origin, and
fetches nothing from elsewhere. It runs until interrupted, and announces
itself in the rendezvous directory ($TOOLWARDEN_RUNTIME_DIR, else
/run/user/<uid>/toolwarden, else /tmp/toolwarden-<uid>) so that askers can link to it.`

// inboxCmd is one run of toolwarden inbox: its flags.
type inboxCmd struct {
	configs, requirements stringList
	approvals, audit      string
	addr                  string
	open                  bool
}

func runInbox(e *env, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveInbox(ctx, e, args)
}

// serveInbox runs the inbox until ctx ends.
func serveInbox(ctx context.Context, e *env, args []string) int {
	var c inboxCmd
	fs := newCmdFlags(e, "inbox", inboxSynopsis, inboxAbout)
	fs.Var(&c.configs, "config", "config file (repeatable): the page says which servers send their asks here")
	fs.Var(&c.requirements, "requirements", "requirements file an admin sets (repeatable)")
	fs.StringVar(&c.approvals, "approvals", "", "persistent \"always\" approvals file to list and revoke (default: "+displayApprovalsPath()+")")
	fs.StringVar(&c.audit, "audit", "", auditFlagUsage)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:0", "loopback address to listen on (port 0: any free port)")
	fs.BoolVar(&c.open, "open", true, "open the page in the desktop's browser, when there is one")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if code, ok := fs.noArgs(""); !ok {
		return code
	}
	if err := web.CheckLoopback(c.addr); err != nil {
		return fs.usageError("%v", err)
	}
	fail := func(err error) int {
		fmt.Fprintln(e.stderr, "toolwarden inbox:", err)
		return exitError
	}
	opts := web.Defaults()
	var cfg *config.Config
	if configs := configPaths(e, c.configs); len(configs) > 0 {
		var err error
		if cfg, err = loadConfig(e, configs, c.requirements); err != nil {
			return fail(err)
		}
		opts = opts.WithNote(inboxConfigNote(cfg))
	}
	path := c.approvals
	if path == "" {
		p, err := defaultApprovalsPath()
		if err != nil {
			return fail(err)
		}
		path = p
	}
	p, err := session.OpenPersistent(path)
	if err != nil {
		return fail(err)
	}
	// The file's problems show on the page, not as log lines.
	p.SetLogger(slog.New(slog.DiscardHandler))
	opts = opts.WithApprovals(p)
	opts, closeAudit, err := inboxAudit(e, opts, c.audit, cfg)
	if err != nil {
		return fail(err)
	}
	defer closeAudit()

	dir, err := inbox.Dir()
	if err != nil {
		return fail(err)
	}
	// Files the page skips (oversized, malformed) are logged once each.
	opts = opts.WithLog(slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	srv, err := web.New(dir, opts)
	if err != nil {
		return fail(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fail(fmt.Errorf("listen on %s: %w", c.addr, err))
	}
	listen := ln.Addr().String()
	hs := srv.HTTPServer(listen) // with its limits: slow and idle connections are closed
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	unannounce, err := inbox.Announce(dir, "http://"+listen)
	if err != nil {
		hs.Close()
		return fail(err)
	}
	defer unannounce()

	url := srv.URL(listen)
	fmt.Fprintf(e.stdout, "toolwarden inbox: %s\n", url)
	fmt.Fprintf(e.stdout, "toolwarden inbox: asks from %s; stop with Ctrl-C\n", dir)
	if c.open {
		openBrowser(e, url)
	}

	select {
	case <-ctx.Done():
	case err := <-served:
		if !errors.Is(err, http.ErrServerClosed) {
			return fail(err)
		}
	}
	srv.Close() // ends the live streams, so Shutdown can finish
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	return exitOK
}

// inboxAudit has the page read the audit log the deciding commands write
// (the same flag, config key and default) and record its revokes there.
// A log that cannot be opened for writing is said on stderr; the page
// still shows what it can read.
func inboxAudit(e *env, opts web.Options, flag string, cfg *config.Config) (web.Options, func(), error) {
	t, err := auditTargetOf(e, flag, cfg)
	if err != nil {
		return opts, nil, err
	}
	if t.Path == "" {
		return opts, func() {}, nil
	}
	opts = opts.WithAudit(t.Path)
	f, err := audit.OpenFile(t.Path, t.Rotation)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden inbox: warning: revokes from the page will not be audited: %v\n", err)
		return opts, func() {}, nil
	}
	return opts.WithAuditLog(audit.New(f)), func() { f.Close() }, nil
}

// inboxConfigNote says which servers of the config send their asks here.
func inboxConfigNote(cfg *config.Config) string {
	var here []string
	for name := range cfg.Servers {
		if cfg.ApprovalChannel(name, name).Effective().Inbox() {
			here = append(here, name)
		}
	}
	slices.Sort(here)
	top := cfg.Channel.Where()
	if len(here) == 0 && !cfg.Channel.Effective().Inbox() {
		return "No server of " + strings.Join(cfg.Files, ", ") + " sends its asks here: set approval_channel = \"inbox\" or \"both\" (" + top + ")."
	}
	if len(here) == 0 {
		return "Asks reach this inbox by " + top + "."
	}
	return "Asks from " + strings.Join(here, ", ") + " reach this inbox (" + top + ")."
}

// openBrowser opens url with the desktop's opener, if there is a desktop;
// failing is fine, the address is printed.
func openBrowser(e *env, url string) {
	if e.getenv("DISPLAY") == "" && e.getenv("WAYLAND_DISPLAY") == "" {
		return
	}
	opener, err := exec.LookPath("xdg-open")
	if err != nil {
		return
	}
	cmd := exec.Command(opener, url)
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}
