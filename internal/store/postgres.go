package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// notifyChannel is the one Postgres channel every replica LISTENs on; a
// notification's payload is the topic.
const notifyChannel = "toolwarden"

// Listener reconnect backoff: quick at first (a restarted server is back
// in a second), capped so a long outage costs little.
const (
	listenMinDelay = 100 * time.Millisecond
	listenMaxDelay = 5 * time.Second
)

// pgState is what a Postgres store keeps beside its pool.
type pgState struct {
	secrets     []string     // the password as given and decoded, scrubbed from errors
	listenerPID atomic.Int32 // the listening backend's pid, 0 while reconnecting
}

// openPostgres opens a database/sql pool through pgx, migrates, and
// starts the listener on its own connection (a pooled one would be handed
// to queries and lose its LISTEN).
func (s *Store) openPostgres(ctx, bg context.Context, dsn string) error {
	s.pg = &pgState{secrets: passwords(dsn)}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return s.pgErr("read the URL", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	db := stdlib.OpenDB(*cfg)
	// A replica's queries are short; a few connections keep decisions
	// from queueing without crowding a server shared by several replicas.
	db.SetMaxOpenConns(16)
	// As many kept idle as may be open: with fewer, a burst's connections
	// beyond them are closed when it ebbs and opened again by the next
	// (a backend and a password exchange each, measured at one in 34
	// calls under 48 busy sessions).
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(5 * time.Minute)
	db.SetConnMaxLifetime(30 * time.Minute)
	s.db = db
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return s.pgErr("connect", err)
	}
	if err := s.migrate(ctx); err != nil {
		_ = db.Close()
		return s.pgErr("migrate", err)
	}
	go s.listen(bg, cfg)
	return nil
}

// passwords are the forms of the URL's password an error could quote.
func passwords(dsn string) []string {
	var out []string
	if u, err := url.Parse(dsn); err == nil {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p, url.QueryEscape(p), url.PathEscape(p))
		}
		for k, v := range u.Query() {
			if strings.Contains(strings.ToLower(k), "password") {
				for _, p := range v {
					if p != "" {
						out = append(out, p, url.QueryEscape(p))
					}
				}
			}
		}
	}
	return out
}

// redactedError shows an error with the store's password replaced; its
// chain still answers errors.Is.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// scrub replaces every form of the password in err's text.
func (s *Store) scrub(err error) error {
	if err == nil || s.pg == nil {
		return err
	}
	msg := err.Error()
	for _, p := range s.pg.secrets {
		msg = strings.ReplaceAll(msg, p, redacted)
	}
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

func (s *Store) pgErr(what string, err error) error {
	if !strings.HasPrefix(err.Error(), "store ") {
		err = fmt.Errorf("store %s: %s: %w", s.url, what, err)
	}
	return s.scrub(err)
}

// pgRetryable: a serialization failure or deadlock, which a retry may win.
func pgRetryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// listen keeps one connection LISTENing and turns each notification into
// a wake-up. Notifications sent while it is not connected are lost, so
// every (re)connect wakes every topic: waiters re-read what they watch.
func (s *Store) listen(ctx context.Context, cfg *pgx.ConnConfig) {
	defer close(s.stopped)
	delay := listenMinDelay
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, cfg, &delay)
		s.pg.listenerPID.Store(0)
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("store: the listener lost its connection and reconnects; watchers poll meanwhile",
			"store", s.url, "error", s.scrub(err).Error(), "retry_in", delay)
		if sleepCtx(ctx, delay) != nil {
			return
		}
		delay = min(delay*2, listenMaxDelay)
	}
}

func (s *Store) listenOnce(ctx context.Context, cfg *pgx.ConnConfig, delay *time.Duration) error {
	conn, err := pgx.ConnectConfig(ctx, cfg.Copy())
	if err != nil {
		return err
	}
	defer func() {
		c, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(c)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	*delay = listenMinDelay
	s.pg.listenerPID.Store(int32(conn.PgConn().PID()))
	s.wakes.fireAll()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		s.wakes.fire(n.Payload)
	}
}
