package main

import (
	"context"
	"log/slog"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/store"
)

// The local front ends (wrap, proxy, the hook) join a shared store only
// when one is named: --store, else $TOOLWARDEN_STORE. Without one they
// keep "always" approvals in the approvals file and sessions in their
// process (or the hook's state dir), as before stores existed.

// localStore opens the store named by flagValue or $TOOLWARDEN_STORE;
// nil, nil when none is named. A store that is named but does not open
// is an error: the command stops at start rather than deciding without
// the approvals, revocations and taints it was told to share.
func localStore(ctx context.Context, flagValue, approvals string, log *slog.Logger) (*store.Store, error) {
	url, err := resolveStore(flagValue, false)
	if err != nil || url == "" {
		return nil, err
	}
	if approvals != "" {
		return nil, errStoreAndApprovals
	}
	return openStore(ctx, url, log)
}

// withStore adds st to a host's settings; nil adds nothing (a nil
// *store.Store must not become a non-nil session.Shared).
func withStore(st *store.Store) func(host.Settings) host.Settings {
	if st == nil {
		return nil
	}
	return func(s host.Settings) host.Settings { return s.WithStore(st) }
}

// closeStore closes st if there is one.
func closeStore(st *store.Store) {
	if st != nil {
		_ = st.Close()
	}
}

// hookLogger is where a hook's log lines go: its stderr, which a warm
// process hands back to the hook with the answer.
func hookLogger(e *env) *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
