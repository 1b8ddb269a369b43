// Package audit writes toolwarden's decision log: JSON Lines, one record per
// decision, in the same shape as the decision and its trace, so `explain`
// and the log never disagree.
package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/toolwarden/toolwarden/internal/session"
)

// Record is one line of the log.
type Record struct {
	Time    time.Time `json:"time"`
	Event   string    `json:"event"` // "check", "observe", "approve", "relay"
	Session string    `json:"session"`
	// Decision is the policy.Decision (or other event payload), inlined as JSON.
	Decision any `json:"decision,omitempty"`
	// Labels are session labels added by the event.
	Labels []string `json:"labels,omitempty"`
	// Scope is set for approvals.
	Scope string `json:"scope,omitempty"`
	// By is who approved, when an approver answered for another's session
	// (the team inbox); empty when the session's own caller did.
	By string `json:"by,omitempty"`
	// Grant is whose calls an "always" approval kept in a shared store
	// covers.
	Grant *session.GrantScope `json:"grant,omitempty"`
}

// Name is the record's event, so a Record is an Event too: a sink that
// exports records (OpenTelemetry logs) takes the engine's records and a
// front end's events alike.
func (r Record) Name() string { return r.Event }

// Log appends records to a writer. It is safe for concurrent use; a write
// error is kept and reported by Err, and never stops decisions.
type Log struct {
	mu   sync.Mutex
	w    io.Writer
	enc  *json.Encoder // nil when the log only exports
	file *File         // w when it is one: written without mu (see WriteContext)
	sink Sink
	err  error
}

// A Sink receives every record a Log writes, after its line is written:
// `serve` exports them as OpenTelemetry log records. ctx is the call the
// record belongs to (its span), or context.Background(). ExportAuditContext
// must not block: decisions wait for it.
type Sink interface {
	ExportAuditContext(ctx context.Context, e Event)
}

// New returns a log writing to w.
func New(w io.Writer) *Log {
	return NewTee(w, nil)
}

// NewTee returns a log writing to w (nil: no file) that also hands every
// record to sink (nil: none).
func NewTee(w io.Writer, sink Sink) *Log {
	l := &Log{w: w, sink: sink}
	if w != nil {
		l.enc = json.NewEncoder(w)
		l.enc.SetEscapeHTML(false)
	}
	l.file, _ = w.(*File)
	return l
}

// Write appends one record.
func (l *Log) Write(r Record) {
	l.WriteContext(context.Background(), r)
}

// WriteContext appends one record written during the call of ctx, which
// an exported record is tied to (its trace and span).
func (l *Log) WriteContext(ctx context.Context, r Record) {
	if l == nil {
		return
	}
	switch {
	case l.file != nil:
		// A File takes concurrent writes and writes the records queued
		// meanwhile together: encoding under mu would queue none.
		l.keep(l.writeLine(r))
	case l.enc != nil:
		l.mu.Lock()
		if err := l.enc.Encode(r); err != nil && l.err == nil {
			l.err = err
		}
		l.mu.Unlock()
	}
	if l.sink != nil {
		l.sink.ExportAuditContext(ctx, r)
	}
}

// lines holds a record's encoder and its line between writes.
var lines = sync.Pool{New: func() any {
	e := &lineEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

type lineEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// writeLine encodes r as the shared encoder would (HTML not escaped, a
// newline at the end) and hands it to the file as one write.
func (l *Log) writeLine(r Record) error {
	e := lines.Get().(*lineEncoder)
	defer lines.Put(e)
	e.buf.Reset()
	if err := e.enc.Encode(r); err != nil {
		return err
	}
	_, err := l.file.Write(e.buf.Bytes())
	return err
}

// keep records err when it is the first.
func (l *Log) keep(err error) {
	if err == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
	}
}

// Err returns the first write error, if any.
func (l *Log) Err() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}
