// Package store keeps what toolwarden's processes share — "always"
// grants and their revocations, session state, pending asks, used request
// states and audit records — in one SQL schema over two engines: SQLite
// for one machine and Postgres for a team of replicas.
//
//	s, err := store.Open(ctx, "sqlite:/var/lib/toolwarden/store.db", store.Options{})
//	if err != nil { ... }     // names the URL (password redacted) and what to do
//	defer s.Close()
//
// Open runs the schema migrations the database lacks and refuses a
// database it cannot use safely (damaged, locked, or at a newer schema)
// without changing a byte of it.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options tune a Store; the zero value is usable.
type Options struct {
	// Replica names this process in rows it writes (default host:pid).
	Replica string
	// Logger receives the store's warnings (default: discarded).
	Logger *slog.Logger
	// Poll is how often watchers re-read the database when no wake-up
	// came (default 200ms): the path that holds when notifications fail.
	Poll time.Duration
	// Staleness is how long a replica may go without confirming it is
	// current before it treats shared grants as absent (default 1s).
	Staleness time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// BusyTimeout is how long a SQLite write waits for another process's
	// write lock before Open or the write fails (default 5s).
	BusyTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Replica == "" {
		host, _ := os.Hostname()
		o.Replica = host + ":" + strconv.Itoa(os.Getpid())
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Poll <= 0 {
		o.Poll = 200 * time.Millisecond
	}
	if o.Staleness <= 0 {
		o.Staleness = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = 5 * time.Second
	}
	return o
}

// Store is an open shared store. Its methods are safe for concurrent use.
type Store struct {
	db     *sql.DB
	engine string
	url    string // redacted
	opts   Options
	log    *slog.Logger

	wakes *wakes

	// pending holds the topics a transaction notified, fired when (and
	// only when) it commits.
	pendingMu sync.Mutex
	pending   map[*sql.Tx][]string

	pg *pgState // Postgres only

	// grants is the snapshot of live grants Covers answers from (watch.go).
	grants grantWatch
	// sessionLoads batches concurrent session loads (sessions_load.go).
	sessionLoads sessionLoads
	// bg is cancelled by Close: background work (the grant watcher) ends.
	bg context.Context

	stop      context.CancelFunc
	stopped   chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Open connects to the store url names (sqlite:PATH, sqlite:///abs/path,
// postgres://..., postgresql://...) and brings its schema up to date.
func Open(ctx context.Context, rawURL string, o Options) (*Store, error) {
	t, err := parseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", Redact(rawURL), err)
	}
	s := &Store{
		engine:  t.engine,
		url:     Redact(rawURL),
		opts:    o.withDefaults(),
		wakes:   newWakes(),
		pending: map[*sql.Tx][]string{},
		stopped: make(chan struct{}),
	}
	s.log = s.opts.Logger
	bg, stop := context.WithCancel(context.Background())
	s.bg, s.stop = bg, stop
	switch t.engine {
	case EngineSQLite:
		err = s.openSQLite(ctx, t.path)
		close(s.stopped)
	default:
		err = s.openPostgres(ctx, bg, t.dsn)
	}
	if err != nil {
		stop()
		return nil, err
	}
	return s, nil
}

// Close stops the listener and closes the database; closing again does
// nothing.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stop()
		<-s.stopped
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("store %s: close: %w", s.url, err)
		}
	})
	return s.closeErr
}

// Engine is "sqlite" or "postgres".
func (s *Store) Engine() string { return s.engine }

// URL is the store's URL with any password redacted.
func (s *Store) URL() string { return s.url }

// Replica is the name this process writes in rows (Options.Replica).
func (s *Store) Replica() string { return s.opts.Replica }

func (s *Store) now() time.Time { return s.opts.Now() }

// newID returns 16 random bytes in hex: ids are made in Go so both
// engines store the same text.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// rebind turns the ? placeholders every query is written with into
// Postgres's $1, $2...; SQLite takes ? as is. A ? inside a quoted string
// is left alone.
func (s *Store) rebind(q string) string {
	if s.engine != EnginePostgres || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n, quoted := 0, false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '\'':
			quoted = !quoted
		case c == '?' && !quoted:
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
