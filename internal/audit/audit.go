// Package audit writes toolwarden's decision log: JSON Lines, one record per
// decision, in the same shape as the decision and its trace, so `explain`
// and the log never disagree.
package audit

import (
	"encoding/json"
	"io"
	"sync"
	"time"
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
}

// Name is the record's event, so a Record is an Event too: a sink that
// exports records (OpenTelemetry logs) takes the engine's records and a
// front end's events alike.
func (r Record) Name() string { return r.Event }

// Log appends records to a writer. It is safe for concurrent use; a write
// error is kept and reported by Err, and never stops decisions.
type Log struct {
	mu  sync.Mutex
	w   io.Writer
	enc *json.Encoder
	err error
}

// New returns a log writing to w.
func New(w io.Writer) *Log {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &Log{w: w, enc: enc}
}

// Write appends one record.
func (l *Log) Write(r Record) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enc.Encode(r); err != nil && l.err == nil {
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
