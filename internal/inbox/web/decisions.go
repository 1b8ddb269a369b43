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

	"github.com/toolwarden/toolwarden/internal/audit"
)

// The audit log can grow without bound; the page reads only its tail.
const (
	tailBytes  = 1 << 20 // what is read of the end of the log
	maxRecords = 2000    // what is sent to the page
)

// decision is one row of the page: a call with its final outcome (calls.go
// folds the records of one call into it), or a revoked approval.
type decision struct {
	Time    time.Time `json:"time"`
	Event   string    `json:"event"` // "call" or "revoke"
	Session string    `json:"session,omitempty"`
	Server  string    `json:"server"`
	Tool    string    `json:"tool"`
	App     string    `json:"app,omitempty"`
	// Decision is the row's kind for the chart and colours: allow,
	// approved (by the user), deny, ask (no outcome known), expired,
	// revoked.
	Decision string `json:"decision"`
	// Outcome is the final outcome (outcome* in calls.go), Label the words
	// the page shows for it ("denied by the user").
	Outcome string `json:"outcome"`
	Label   string `json:"label"`
	// Verdict is the policy's decision ("allow", "ask", "deny").
	Verdict string `json:"verdict,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// By is where a person answered or revoked: "inbox", "elicitation",
	// "webhook-link", "agent", "cli".
	By string `json:"by,omitempty"`
}

// auditLine is the part of an audit record (internal/audit) the page reads:
// the fields of a check's policy.Decision, an approve's key, an Ask and a
// Revoke share their names.
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
		// An Ask's and a Revoke's fields.
		Outcome string `json:"outcome"`
		Option  string `json:"option"`
		Channel string `json:"channel"`
		By      string `json:"by"`
		All     bool   `json:"all"`
		File    string `json:"file"`
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

// readTail reads the calls at the end of the audit log at path (and of the
// file rotated last, when the log is short): at most tailBytes, whole
// lines only, malformed lines skipped and counted, the file left as it is.
func readTail(path string) decisionTail {
	out := decisionTail{File: path, Decisions: []decision{}}
	if path == "" {
		return out
	}
	cur, curCut, err := readEnd(path, tailBytes)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	buf := cur
	if !curCut && len(cur) < tailBytes {
		// Just after a rotation the log is short: its older records are
		// in <path>.1. Read after the log, so that a rotation in between
		// loses rows for one refresh rather than showing them twice.
		older, olderCut, err := readEnd(audit.Rotated(path, 1), tailBytes-int64(len(cur)))
		if err == nil && len(older) > 0 {
			if again, _, err := readEnd(path, tailBytes-int64(len(older))); err == nil {
				buf = append(older, again...)
				curCut = olderCut
			}
		}
	}
	out.Truncated = curCut
	var lines []auditLine
	for line := range bytes.Lines(buf) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var l auditLine
		if json.Unmarshal(line, &l) != nil || l.Time.IsZero() || l.Event == "" {
			out.Skipped++
			continue
		}
		lines = append(lines, l)
	}
	var malformed int
	out.Decisions, malformed = foldCalls(lines)
	out.Skipped += malformed
	if len(out.Decisions) > maxRecords {
		out.Decisions = out.Decisions[len(out.Decisions)-maxRecords:]
		out.Truncated = true
	}
	return out
}

// readEnd reads at most limit bytes of the end of the file at path, from
// the start of a line: cut says the file holds more before them. A missing
// file is empty.
func readEnd(path string, limit int64) (b []byte, cut bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil // nothing decided yet
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false, errors.New(path + " is not a regular file")
	}
	start := max(fi.Size()-limit, 0)
	buf := make([]byte, fi.Size()-start)
	n, err := f.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, err
	}
	buf = buf[:n]
	if start > 0 {
		// The first line is most likely cut: drop it.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		} else {
			buf = nil
		}
	}
	return buf, start > 0, nil
}

func (st *site) decisions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, readTail(st.opts.audit))
}
