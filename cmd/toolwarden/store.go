package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/internal/store"
)

// storeEnv names the shared store when no --store flag does: a URL with a
// password then need not show in `ps` (a Kubernetes Secret can hold it).
const storeEnv = "TOOLWARDEN_STORE"

// addStoreFlag defines --store on fs.
func addStoreFlag(fs *flag.FlagSet) *string {
	return fs.String("store", "", "the shared store: sqlite:PATH or postgres://USER@HOST/DB (default: $"+storeEnv+")")
}

// resolveStore is the store a command uses: the --store flag, else
// $TOOLWARDEN_STORE, else, for serve (serveDefault), the SQLite file in
// the user's state directory; "" means no store (wrap, proxy, the hook and
// approvals then keep "always" approvals in the approvals file).
func resolveStore(flagValue string, serveDefault bool) (string, error) {
	if u := strings.TrimSpace(flagValue); u != "" {
		return u, nil
	}
	if u := strings.TrimSpace(os.Getenv(storeEnv)); u != "" {
		return u, nil
	}
	if !serveDefault {
		return "", nil
	}
	u, err := store.DefaultURL()
	if err != nil {
		return "", fmt.Errorf("no --store given and no default store: %w (give --store sqlite:PATH or postgres://...)", err)
	}
	return u, nil
}

// storeGiven reports whether the store was named (flag or environment)
// rather than defaulted.
func storeGiven(flagValue string) bool {
	return strings.TrimSpace(flagValue) != "" || strings.TrimSpace(os.Getenv(storeEnv)) != ""
}

// openStore opens (and migrates) the store at url. Its error names the
// URL with the password hidden (store.Open's words) and what to check,
// so that a replica that cannot reach its database stops at start rather
// than serving on state it cannot share.
func openStore(ctx context.Context, url string, log *slog.Logger) (*store.Store, error) {
	st, err := store.Open(ctx, url, store.Options{Logger: log})
	if err != nil {
		check := "the Postgres server must be reachable and accept these credentials"
		if strings.HasPrefix(strings.ToLower(url), "sqlite:") {
			check = "the file's directory must be writable by this user"
		}
		return nil, fmt.Errorf("the shared store did not open: %w; check --store or $%s (%s)", err, storeEnv, check)
	}
	return st, nil
}

// errStoreAndApprovals refuses --approvals beside a store, in every
// command that takes both: the store holds "always" approvals, and a file
// named beside it would count for nothing (a second truth other
// processes and replicas never see).
var errStoreAndApprovals = errors.New("--approvals and a shared store (--store or $" + storeEnv + ") were both given: with a store, \"always\" approvals live in it; drop --approvals, or drop the store to keep the approvals file (for serve: one replica only)")

// serveStore opens serve's store: the one named (flag, environment), else
// the default SQLite file; none when --approvals alone is given, which
// keeps serve as it was before stores (approvals in that file, sessions
// and request states in this process), with a warning that replicas need
// a store.
func serveStore(ctx context.Context, f *serveCmdFlags, log *slog.Logger) (*store.Store, error) {
	if f.Approvals != "" {
		if storeGiven(*f.Store) {
			return nil, errStoreAndApprovals
		}
		log.Warn("--approvals without --store: \"always\" approvals stay in that file and sessions and request states in this process; several replicas need a shared store (--store postgres://...)")
		return nil, nil
	}
	url, err := resolveStore(*f.Store, true)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, url, log)
	if err != nil {
		return nil, err
	}
	log.Info("shared store open", "store", st.URL(), "engine", st.Engine(), "replica", st.Replica())
	return st, nil
}

// closeAuditQueue writes the audit records still queued for the store,
// for at most a few seconds (the audit log file has them all).
func closeAuditQueue(q *store.AuditQueue, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := q.Close(ctx); err != nil {
		log.Warn("audit records not written to the store at shutdown (the audit log file has them)", "err", err)
	}
	if n := q.Dropped(); n > 0 {
		log.Warn("audit records were dropped from the store while serving (the audit log file has them)", "dropped", n)
	}
}
