package web

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// Channel is the name answers from this page carry.
const Channel = "inbox"

// askList is what /api/asks returns and the live stream sends: the
// oldest pending asks, each cut to what the page shows (bounds.go).
type askList struct {
	Asks []inbox.Ask `json:"asks"`
	// More counts pending asks beyond the ones listed.
	More    int             `json:"more"`
	Skipped []inbox.Skipped `json:"skipped"`
	// SkippedMore counts skipped files beyond the ones named.
	SkippedMore int       `json:"skipped_more"`
	Now         time.Time `json:"now"` // the server's clock, to count down against
}

// list scans the directory, each ask cut as it is read, so a scan holds
// at most one file whole at a time.
func (st *site) list() (askList, error) {
	asks, more, skipped, err := inbox.ScanOldest(st.dir, maxAsksListed, shownAsk)
	st.skips.log(st.opts.log, st.dir, skipped)
	l := bounded(asks, skipped)
	l.More += more
	l.Now = time.Now().UTC()
	return l, err
}

func (st *site) asks(w http.ResponseWriter, r *http.Request) {
	l, err := st.list()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, l)
}

// answer records the page's answer to one ask.
func (st *site) answer(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Option string `json:"option"`
	}
	if err := readJSON(r, &body); err != nil {
		writeError(w, http.StatusBadRequest, "want {\"option\": \"<option id>\"}: %v", err)
		return
	}
	respond(w, st.dir, r.PathValue("id"), body.Option, Channel)
}

// respond records an answer and maps the rendezvous' refusals to statuses.
func respond(w http.ResponseWriter, dir, id, option, channel string) {
	err := inbox.Respond(dir, id, option, channel)
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, map[string]string{"ask_id": id, "option": option})
	case errors.Is(err, inbox.ErrAnswered):
		writeError(w, http.StatusConflict, "%v", err)
	case errors.Is(err, inbox.ErrExpired):
		writeError(w, http.StatusGone, "%v", err)
	case errors.Is(err, inbox.ErrUnknownAsk):
		writeError(w, http.StatusNotFound, "%v", err)
	case errors.Is(err, inbox.ErrNotOffered):
		writeError(w, http.StatusBadRequest, "%v", err)
	default:
		writeError(w, http.StatusBadRequest, "%v", err)
	}
}

// refreshEvery is how often the live stream looks again even without a
// notification: asks whose process died and files changed by others
// (approvals, the audit log) have no notification of their own.
const refreshEvery = 2 * time.Second

// events is the live update stream (Server-Sent Events): "asks" with the
// whole list whenever it changes, "approvals" and "decisions" when those
// files change (the page fetches them again).
func (st *site) events(w http.ResponseWriter, r *http.Request) {
	select {
	case st.streams <- struct{}{}:
		defer func() { <-st.streams }()
	default:
		writeError(w, http.StatusServiceUnavailable, "%d live update streams are open already (one per open inbox tab): close a tab and reload", maxLiveStreams)
		return
	}
	ctx := r.Context()
	changes, err := inbox.Watch(ctx, st.dir)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	// The stream outlives the server's ReadTimeout, which would end it;
	// each write is bounded instead, so a reader that stops reading is
	// dropped rather than held forever.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)

	var lastAsks [sha256.Size]byte // of the last list sent: a stream keeps no copy
	var lastApprovals, lastAudit stamp
	approvalsPath := ""
	if st.opts.approvals != nil {
		approvalsPath = st.opts.approvals.Path()
	}
	send := func(event string, data []byte) {
		_ = rc.SetWriteDeadline(time.Now().Add(writeWait))
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
	}
	look := func(first bool) bool {
		if l, err := st.list(); err == nil {
			l.Now = time.Time{} // compare the lists, not the clock
			b, _ := json.Marshal(l)
			if sum := sha256.Sum256(b); first || sum != lastAsks {
				lastAsks = sum
				l.Now = time.Now().UTC()
				full, _ := json.Marshal(l)
				send("asks", full)
			}
		}
		if s := statOf(approvalsPath); first || s != lastApprovals {
			lastApprovals = s
			send("approvals", []byte("{}"))
		}
		if s := statOf(st.opts.audit); first || s != lastAudit {
			lastAudit = s
			send("decisions", []byte("{}"))
		}
		_ = rc.SetWriteDeadline(time.Now().Add(writeWait))
		return rc.Flush() == nil // else the reader is gone or stopped reading
	}
	if !look(true) {
		return
	}
	tick := time.NewTicker(refreshEvery)
	defer tick.Stop()
	keepalive := time.NewTicker(keepaliveEvery)
	defer keepalive.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-st.stop.Done():
			return
		case _, ok := <-changes:
			if !ok || !look(false) {
				return
			}
		case <-tick.C:
			if !look(false) {
				return
			}
		case <-keepalive.C:
			_ = rc.SetWriteDeadline(time.Now().Add(writeWait))
			if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

// stamp is what a stat says of a file, to notice a change.
type stamp struct {
	size  int64
	mtime time.Time
	ok    bool
}

func statOf(path string) stamp {
	if path == "" {
		return stamp{}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	return stamp{fi.Size(), fi.ModTime(), true}
}
