package inbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// Info is what a running inbox page publishes in <dir>/inbox.json so askers
// can link to it: its address without the per-run token.
type Info struct {
	URL     string    `json:"url"` // "http://127.0.0.1:PORT"
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

const infoFile = "inbox.json"

// Announce writes inbox.json for an inbox served at base (an http URL on a
// loopback address, without token). The returned func removes the file
// if it is still this process's.
func Announce(dir, base string) (remove func() error, err error) {
	if err := prepare(dir); err != nil {
		return nil, err
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.RawQuery != "" {
		return nil, fmt.Errorf("inbox: announce: %q is not an http://host:port address without query", base)
	}
	info := Info{URL: base, PID: os.Getpid(), Started: time.Now().UTC()}
	b, _ := json.Marshal(info)
	path := filepath.Join(dir, infoFile)
	if err := writeAtomic(path, b); err != nil {
		return nil, fmt.Errorf("inbox: announce: %w", err)
	}
	return func() error {
		cur, err := Running(dir)
		if err != nil || cur.PID != info.PID || cur.URL != info.URL {
			return nil // another inbox took over; leave its file alone
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("inbox: %w", err)
		}
		return nil
	}, nil
}

// Running returns the inbox announced in dir, or ErrNoInbox when none is
// (no file, or its process is gone).
func Running(dir string) (Info, error) {
	b, err := readBounded(filepath.Join(dir, infoFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Info{}, ErrNoInbox
	}
	if err != nil {
		return Info{}, fmt.Errorf("inbox: %w", err)
	}
	var info Info
	if err := decodeStrict(b, &info); err != nil {
		return Info{}, fmt.Errorf("inbox: %s: %w", infoFile, err)
	}
	if !pidAlive(info.PID) {
		return Info{}, ErrNoInbox
	}
	return info, nil
}
