package web

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// What the page sends is bounded whatever the rendezvous directory holds:
// any process of the user can write ask files there, and every open page
// gets the whole list on every change.
const (
	// maxAsksListed bounds the asks one list carries (oldest first); the
	// rest are counted in More and shown once older ones are answered.
	maxAsksListed = 50
	// maxSkippedListed bounds the unreadable files one list names.
	maxSkippedListed = 20
	// maxArgumentsShown bounds an ask's arguments text. toolwarden's own
	// asks are the prompt's rendering, far below it for any ordinary call.
	maxArgumentsShown = 16 << 10
	// maxFieldShown bounds each other text of an ask (title, a reason,
	// the scope, names), maxReasonsShown and maxOptionsShown their counts.
	maxFieldShown   = 1 << 10
	maxReasonsShown = 16
	maxOptionsShown = 8
	// maxAskShown is the most one ask may weigh once cut; a heavier one
	// (a flood of hints, say) is left out and named as skipped.
	maxAskShown = 32 << 10
	// maxLiveStreams bounds the live update streams open at once (a tab
	// each): each holds the last list it sent.
	maxLiveStreams = 8
	// keepaliveEvery is how often an idle stream sends a comment, so that
	// a reader that went away is noticed; writeWait bounds one write to a
	// stream (a reader that stopped reading is dropped).
	keepaliveEvery = 15 * time.Second
	writeWait      = 10 * time.Second
)

// The http.Server limits of the page: a connection that sends its headers
// or body slowly, or sits idle, is closed; live streams clear the read
// deadline themselves and bound each write instead (WriteTimeout would
// cut them).
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	idleTimeout       = 30 * time.Second
	maxHeaderBytes    = 32 << 10
	maxBodyBytes      = 64 << 10
)

// HTTPServer returns the http.Server that serves the page at listen, with
// the limits above set.
func (s *Server) HTTPServer(listen string) *http.Server {
	return &http.Server{
		Handler:           s.Handler(listen),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// shownAsk cuts an ask to what the page shows, with policy's cutter (as a
// prompt cuts a value: the start, how much was cut, the digest of the
// whole). A cut ask offers only allow once and deny on the page: what it
// shows is not all the asker rendered, so it cannot be remembered.
func shownAsk(a inbox.Ask) inbox.Ask {
	cut := false
	field := func(s string, max int) string {
		c := policy.CutText(s, max)
		cut = cut || c != s
		return c
	}
	a.Arguments = field(a.Arguments, maxArgumentsShown)
	a.Title = field(a.Title, maxFieldShown)
	a.Scope = field(a.Scope, maxFieldShown)
	a.Session = field(a.Session, maxFieldShown)
	a.Server = field(a.Server, maxFieldShown)
	a.Tool = field(a.Tool, maxFieldShown)
	a.App = field(a.App, maxFieldShown)
	a.Origin = field(a.Origin, maxFieldShown)
	a.Digest = field(a.Digest, 64)
	a.Hints.Trust = field(a.Hints.Trust, 64)
	if len(a.Reasons) > maxReasonsShown {
		a.Reasons = append(a.Reasons[:maxReasonsShown:maxReasonsShown], fmt.Sprintf("(%d more reasons not shown)", len(a.Reasons)-maxReasonsShown))
		cut = true
	}
	reasons := make([]string, len(a.Reasons))
	for i, r := range a.Reasons {
		reasons[i] = field(r, maxFieldShown)
	}
	a.Reasons = reasons
	var opts []inbox.Option
	for _, o := range a.Options {
		if len(opts) < maxOptionsShown {
			opts = append(opts, inbox.Option{ID: field(o.ID, 64), Title: field(o.Title, 256)})
		} else {
			cut = true
		}
	}
	if cut {
		opts = onlyOnce(opts)
		a.Arguments = "(cut for this page: it shows only part of what the asker rendered, so only allow once and deny are offered here)\n" + a.Arguments
	}
	a.Options = opts
	return a
}

// onlyOnce keeps the options that remember nothing.
func onlyOnce(opts []inbox.Option) []inbox.Option {
	var out []inbox.Option
	for _, o := range opts {
		if o.ID == policy.OptionAllowOnce || o.ID == policy.OptionDeny {
			out = append(out, o)
		}
	}
	return out
}

// bounded cuts a scan to what one list carries: the oldest maxAsksListed
// asks that weigh at most maxAskShown each, and maxSkippedListed skips.
func bounded(asks []inbox.Ask, skipped []inbox.Skipped) askList {
	l := askList{Asks: []inbox.Ask{}, Skipped: []inbox.Skipped{}}
	for _, a := range asks {
		if b, err := json.Marshal(a); err != nil || len(b) > maxAskShown {
			skipped = append(skipped, inbox.Skipped{File: a.ID + ".json", Why: fmt.Sprintf("the ask weighs more than the %d bytes the page shows of one, even cut", maxAskShown)})
			continue
		}
		if len(l.Asks) == maxAsksListed {
			l.More++
			continue
		}
		l.Asks = append(l.Asks, a)
	}
	if len(skipped) > maxSkippedListed {
		l.SkippedMore = len(skipped) - maxSkippedListed
		skipped = skipped[:maxSkippedListed]
	}
	l.Skipped = append(l.Skipped, skipped...)
	return l
}

// skipLog logs each unreadable file once (while it stays), not on every
// scan of every stream.
type skipLog struct {
	mu     sync.Mutex
	logged map[string]bool
}

// maxSkipsRemembered bounds what skipLog remembers; past it, it forgets
// and may log a file again.
const maxSkipsRemembered = 4096

func (s *skipLog) log(l *slog.Logger, dir string, skipped []inbox.Skipped) {
	if l == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.logged == nil || len(s.logged) > maxSkipsRemembered {
		s.logged = map[string]bool{}
	}
	for _, k := range skipped {
		key := k.File + "\x00" + k.Why
		if !s.logged[key] {
			s.logged[key] = true
			l.Warn("skipped a file in the approval inbox's directory", "dir", dir, "file", k.File, "why", k.Why)
		}
	}
}
