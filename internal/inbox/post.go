package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// pollEvery is how often Wait and Watch look at the directory even without
// a notification: fsnotify can be unavailable (inotify limits) or miss a
// change on some filesystems, and a missed answer must only be late.
const pollEvery = time.Second

// newWatcher is fsnotify.NewWatcher; tests replace it to prove the poll
// alone delivers.
var newWatcher = fsnotify.NewWatcher

// Pending is an ask this process posted and waits on.
type Pending struct {
	dir    string
	ask    Ask
	once   sync.Once
	closed chan struct{}
}

// Post publishes an ask in dir: it mints the ask's id, fills Created and
// PID when unset, and writes <dir>/asks/<id>.json atomically (0600). The
// ask must offer options, name a tool and say when it expires. Close the
// returned Pending when done with it, answered or not.
func Post(dir string, a Ask) (*Pending, error) {
	if err := prepare(dir); err != nil {
		return nil, err
	}
	a.ID = newID()
	if a.Created.IsZero() {
		a.Created = time.Now().UTC()
	}
	if a.PID == 0 {
		a.PID = os.Getpid()
	}
	if err := a.validate(); err != nil {
		return nil, fmt.Errorf("inbox: post: %w", err)
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("inbox: post: %w", err)
	}
	if len(b) > maxFile {
		return nil, fmt.Errorf("inbox: post: the ask is %d bytes, more than %d: cut its arguments as the prompt does", len(b), maxFile)
	}
	if err := writeAtomic(askPath(dir, a.ID), b); err != nil {
		return nil, fmt.Errorf("inbox: post: %w", err)
	}
	return &Pending{dir: dir, ask: a, closed: make(chan struct{})}, nil
}

// Ask returns the ask as posted (with its id).
func (p *Pending) Ask() Ask { return p.ask }

// ID returns the ask's id.
func (p *Pending) ID() string { return p.ask.ID }

// Wait blocks until an answer to the ask is recorded, ctx ends (ctx.Err()),
// the ask expires (ErrExpired) or Close is called (ErrWithdrawn). An answer
// whose option the ask did not offer is an error (ErrNotOffered), never
// applied.
func (p *Pending) Wait(ctx context.Context) (Answer, error) {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w, err := newWatcher(); err == nil {
		defer w.Close()
		if w.Add(filepath.Join(p.dir, answersDir)) == nil {
			events, errs = w.Events, w.Errors
		}
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	expire := time.NewTimer(time.Until(p.ask.Expires))
	defer expire.Stop()
	for {
		if ans, ok, err := p.answered(); ok || err != nil {
			return ans, err
		}
		select {
		case <-ctx.Done():
			return Answer{}, ctx.Err()
		case <-p.closed:
			return Answer{}, ErrWithdrawn
		case <-expire.C:
			// One last look: an answer may have landed as the timer fired.
			if ans, ok, err := p.answered(); ok || err != nil {
				return ans, err
			}
			return Answer{}, ErrExpired
		case <-events:
		case <-errs:
		case <-tick.C:
		}
	}
}

// answered looks for the ask's answer.
func (p *Pending) answered() (Answer, bool, error) {
	ans, err := readAnswer(p.dir, p.ask.ID)
	if errors.Is(err, fs.ErrNotExist) {
		return Answer{}, false, nil
	}
	if err != nil {
		return Answer{}, false, fmt.Errorf("inbox: %w", err)
	}
	if !p.ask.Offers(ans.Option) {
		return Answer{}, false, fmt.Errorf("inbox: answer %q from %q: %w", ans.Option, ans.Channel, ErrNotOffered)
	}
	return ans, true, nil
}

// Close withdraws the ask: its ask, answer and answer-link files are
// removed, so every channel stops showing it, and a Wait in progress
// returns ErrWithdrawn. Idempotent.
func (p *Pending) Close() error {
	p.once.Do(func() { close(p.closed) })
	return withdraw(p.dir, p.ask.ID)
}

// withdraw removes every file of ask id.
func withdraw(dir, id string) error {
	var errs []error
	for _, f := range []string{askPath(dir, id), answerPath(dir, id)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	removeLinks(dir, id)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("inbox: withdraw %s: %w", id, err)
	}
	return nil
}
