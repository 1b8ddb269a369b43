package inbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Skipped is a file in the asks directory that List could not use, and why.
type Skipped struct {
	File string `json:"file"`
	Why  string `json:"why"`
}

// staleAfter is how long an expired ask (or an answer without its ask) may
// stay before List removes it: its asker is gone or stopped waiting long ago.
const staleAfter = time.Minute

// List returns the asks pending now, oldest first: answered and expired
// asks and asks whose process is gone are left out, and so are malformed files (Scan
// says which and why).
func List(dir string) ([]Ask, error) {
	asks, _, err := Scan(dir)
	return asks, err
}

// Scan is List that also reports the files it skipped. A bad file is never
// fatal: only an unusable directory is an error. Files left by processes
// that are gone (or expired long ago) are removed on the way.
func Scan(dir string) ([]Ask, []Skipped, error) {
	var asks []Ask
	skipped, err := scan(dir, func(a Ask) { asks = append(asks, a) })
	if err != nil {
		return nil, nil, err
	}
	sortOldestFirst(asks)
	return asks, skipped, nil
}

// ScanOldest is Scan for a reader that shows asks (the inbox page): it
// keeps the oldest max pending asks, each passed through shape as soon as
// it is read, and counts the others in more. However many files the
// directory holds, a scan holds one whole at a time and max shaped.
func ScanOldest(dir string, max int, shape func(Ask) Ask) (asks []Ask, more int, skipped []Skipped, err error) {
	skipped, err = scan(dir, func(a Ask) {
		if len(asks) == max {
			more++
			newest := 0
			for i := range asks {
				if asks[i].Created.After(asks[newest].Created) {
					newest = i
				}
			}
			if max == 0 || !a.Created.Before(asks[newest].Created) {
				return
			}
			asks = slices.Delete(asks, newest, newest+1)
		}
		if shape != nil {
			a = shape(a)
		}
		asks = append(asks, a)
	})
	if err != nil {
		return nil, 0, nil, err
	}
	sortOldestFirst(asks)
	return asks, more, skipped, nil
}

func sortOldestFirst(asks []Ask) {
	sort.SliceStable(asks, func(i, j int) bool { return asks[i].Created.Before(asks[j].Created) })
}

// scan hands each pending ask to keep, and returns the files it skipped.
func scan(dir string, keep func(Ask)) ([]Skipped, error) {
	if err := prepare(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Join(dir, asksDir))
	if err != nil {
		return nil, fmt.Errorf("inbox: list: %w", err)
	}
	now := time.Now()
	var skipped []Skipped
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".tmp-") {
			continue // a Post in progress
		}
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || !validID(id) {
			skipped = append(skipped, Skipped{name, "not an ask file (<32 hex digits>.json)"})
			continue
		}
		a, err := readAsk(dir, id)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // withdrawn while we listed
		case err != nil:
			skipped = append(skipped, Skipped{name, err.Error()})
			continue
		case !pidAlive(a.PID):
			withdraw(dir, id)
			continue
		case !now.Before(a.Expires):
			if now.Sub(a.Expires) > staleAfter {
				withdraw(dir, id)
			}
			continue
		case answered(dir, id):
			continue // no longer pending: its asker is about to withdraw it
		}
		keep(a)
	}
	sweepAnswers(dir, now)
	return skipped, nil
}

// Get returns the pending ask id (ErrUnknownAsk when there is none,
// ErrExpired when it expired).
func Get(dir, id string) (Ask, error) {
	if !validID(id) {
		return Ask{}, fmt.Errorf("inbox: %q: %w", id, errBadAskID)
	}
	if err := prepare(dir); err != nil {
		return Ask{}, err
	}
	a, err := readAsk(dir, id)
	if errors.Is(err, fs.ErrNotExist) {
		return Ask{}, fmt.Errorf("inbox: ask %s: %w", id, ErrUnknownAsk)
	}
	if err != nil {
		return Ask{}, fmt.Errorf("inbox: ask %s: %w", id, err)
	}
	if !pidAlive(a.PID) {
		return Ask{}, fmt.Errorf("inbox: ask %s: its process %d is gone: %w", id, a.PID, ErrUnknownAsk)
	}
	if !time.Now().Before(a.Expires) {
		return Ask{}, fmt.Errorf("inbox: ask %s: %w", id, ErrExpired)
	}
	return a, nil
}

// answered reports whether ask id has an answer.
func answered(dir, id string) bool {
	_, err := os.Lstat(answerPath(dir, id))
	return err == nil
}

// sweepAnswers removes answers whose ask is gone (an answer that raced the
// asker's Close) once they are old enough that no Wait can want them.
func sweepAnswers(dir string, now time.Time) {
	entries, err := os.ReadDir(filepath.Join(dir, answersDir))
	if err != nil {
		return
	}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !validID(id) {
			continue
		}
		if _, err := os.Lstat(askPath(dir, id)); !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > staleAfter {
			os.Remove(answerPath(dir, id))
		}
	}
}

// String renders the skip for a log line.
func (s Skipped) String() string { return s.File + ": " + s.Why }
