package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/toolwarden/toolwarden/sdk/inbox"
)

// Channel is the name answers from this page carry.
const Channel = "inbox"

// askList is what /api/asks returns and the live stream sends.
type askList struct {
	Asks    []inbox.Ask     `json:"asks"`
	Skipped []inbox.Skipped `json:"skipped"`
	Now     time.Time       `json:"now"` // the server's clock, to count down against
}

func (st *site) list() (askList, error) {
	asks, skipped, err := inbox.Scan(st.dir)
	if asks == nil {
		asks = []inbox.Ask{}
	}
	if skipped == nil {
		skipped = []inbox.Skipped{}
	}
	return askList{Asks: asks, Skipped: skipped, Now: time.Now().UTC()}, err
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
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "streaming unsupported")
		return
	}
	ctx := r.Context()
	changes, err := inbox.Watch(ctx, st.dir)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)

	var lastAsks []byte
	var lastApprovals, lastAudit stamp
	approvalsPath := ""
	if st.opts.approvals != nil {
		approvalsPath = st.opts.approvals.Path()
	}
	send := func(event string, data []byte) {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
	}
	look := func(first bool) {
		if l, err := st.list(); err == nil {
			l.Now = time.Time{} // compare the lists, not the clock
			b, _ := json.Marshal(l.Asks)
			if first || !bytes.Equal(b, lastAsks) {
				lastAsks = b
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
		flusher.Flush()
	}
	look(true)
	tick := time.NewTicker(refreshEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-st.stop.Done():
			return
		case _, ok := <-changes:
			if !ok {
				return
			}
			look(false)
		case <-tick.C:
			look(false)
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
