package inbox

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch reports changes to the pending asks and their answers in dir: a
// value on the channel means "list again". Notifications are coalesced (the
// channel holds at most one), come from fsnotify, and from a poll of the
// directories every second in case fsnotify is unavailable or misses one.
// The channel is closed when ctx ends.
func Watch(ctx context.Context, dir string) (<-chan struct{}, error) {
	if err := prepare(dir); err != nil {
		return nil, err
	}
	var w *fsnotify.Watcher
	if nw, err := newWatcher(); err == nil {
		w = nw
		for _, d := range []string{asksDir, answersDir} {
			if w.Add(filepath.Join(dir, d)) != nil {
				// Out of inotify watches: the poll below still notices.
				w.Close()
				w = nil
				break
			}
		}
	}
	out := make(chan struct{}, 1)
	notify := func() {
		select {
		case out <- struct{}{}:
		default:
		}
	}
	// Taken now, not in the goroutine: a change made right after Watch
	// returns must differ from it.
	last := fingerprint(dir)
	go func() {
		defer close(out)
		var events <-chan fsnotify.Event
		var errs <-chan error
		if w != nil {
			defer w.Close()
			events, errs = w.Events, w.Errors
		}
		tick := time.NewTicker(pollEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-events:
				notify()
			case <-errs:
				notify() // an overflow: something changed, list again
			case <-tick.C:
				if f := fingerprint(dir); f != last {
					last = f
					notify()
				}
			}
		}
	}()
	return out, nil
}

// fingerprint hashes the names, sizes and times of the ask and answer files.
func fingerprint(dir string) uint64 {
	h := fnv.New64a()
	for _, d := range []string{asksDir, answersDir} {
		entries, _ := os.ReadDir(filepath.Join(dir, d))
		for _, e := range entries {
			fmt.Fprint(h, d, "/", e.Name())
			if fi, err := e.Info(); err == nil {
				fmt.Fprint(h, fi.Size(), fi.ModTime().UnixNano())
			}
		}
	}
	return h.Sum64()
}
