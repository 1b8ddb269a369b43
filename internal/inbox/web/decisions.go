package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"time"
)

// The audit log can grow without bound; the page reads only its tail.
const (
	tailBytes  = 1 << 20 // what is read of the end of the log
	maxRecords = 2000    // what is sent to the page
)

// decision is one audit record as the page shows it: a check's verdict,
// or an approval given.
type decision struct {
	Time     time.Time `json:"time"`
	Event    string    `json:"event"` // "check" or "approve"
	Session  string    `json:"session,omitempty"`
	Server   string    `json:"server"`
	Tool     string    `json:"tool"`
	App      string    `json:"app,omitempty"`
	Decision string    `json:"decision"` // allow, ask, deny; for approve: the scope
	Reason   string    `json:"reason,omitempty"`
}

// auditLine is the part of an audit record (internal/audit) the page reads.
type auditLine struct {
	Time     time.Time `json:"time"`
	Event    string    `json:"event"`
	Session  string    `json:"session"`
	Scope    string    `json:"scope"`
	Decision struct {
		Decision string `json:"decision"`
		Server   string `json:"server"`
		Tool     string `json:"tool"`
		App      string `json:"app"`
		Reasons  []struct {
			Message string `json:"message"`
		} `json:"reasons"`
	} `json:"decision"`
}

// decisionTail is the result of reading the log's tail.
type decisionTail struct {
	File      string     `json:"file"`
	Decisions []decision `json:"decisions"`
	// Skipped counts lines that are not records (torn, hand-edited,
	// another program's); Truncated says older records were left out.
	Skipped   int    `json:"skipped"`
	Truncated bool   `json:"truncated"`
	Error     string `json:"error,omitempty"`
}

// readTail reads the decisions at the end of the audit log at path: at most
// tailBytes of it, whole lines only, malformed lines skipped and counted.
func readTail(path string) decisionTail {
	out := decisionTail{File: path, Decisions: []decision{}}
	if path == "" {
		return out
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out // nothing decided yet
	}
	if err != nil {
		out.Error = err.Error()
		return out
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		out.Error = path + " is not a regular file"
		return out
	}
	start := max(fi.Size()-tailBytes, 0)
	buf := make([]byte, fi.Size()-start)
	n, err := f.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		out.Error = err.Error()
		return out
	}
	buf = buf[:n]
	if start > 0 {
		// The first line is most likely cut: drop it.
		out.Truncated = true
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		} else {
			buf = nil
		}
	}
	for line := range bytes.Lines(buf) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var l auditLine
		if json.Unmarshal(line, &l) != nil || l.Time.IsZero() {
			out.Skipped++
			continue
		}
		d := decision{Time: l.Time, Event: l.Event, Session: l.Session, Server: l.Decision.Server, Tool: l.Decision.Tool, App: l.Decision.App}
		switch l.Event {
		case "check":
			d.Decision = l.Decision.Decision
			if len(l.Decision.Reasons) > 0 {
				d.Reason = l.Decision.Reasons[0].Message
			}
		case "approve":
			d.Decision = "approved " + l.Scope
		default:
			continue // observe, relay, reload...: not decisions
		}
		if d.Server == "" || d.Tool == "" || d.Decision == "" {
			out.Skipped++
			continue
		}
		out.Decisions = append(out.Decisions, d)
	}
	if len(out.Decisions) > maxRecords {
		out.Decisions = out.Decisions[len(out.Decisions)-maxRecords:]
		out.Truncated = true
	}
	return out
}

func (st *site) decisions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, readTail(st.opts.audit))
}
