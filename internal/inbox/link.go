package inbox

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// link is what <dir>/links/<sha256 of key>.json holds: the key itself is
// never stored, so reading the directory does not yield a usable link.
type link struct {
	AskID   string    `json:"ask_id"`
	Created time.Time `json:"created"`
}

// MintLink mints a one-time answer link for ask id on the running inbox:
// <inbox url>/a/<id>?k=<key>. The inbox accepts the key once, for that ask
// only, in place of its per-run token. ErrNoInbox when no inbox runs.
func MintLink(dir, id string) (string, error) {
	if _, err := Get(dir, id); err != nil {
		return "", err
	}
	info, err := Running(dir)
	if err != nil {
		return "", err
	}
	var k [32]byte
	if _, err := rand.Read(k[:]); err != nil {
		return "", fmt.Errorf("inbox: mint link: %w", err)
	}
	key := hex.EncodeToString(k[:])
	b, _ := json.Marshal(link{AskID: id, Created: time.Now().UTC()})
	if err := writeAtomic(linkPath(dir, key), b); err != nil {
		return "", fmt.Errorf("inbox: mint link: %w", err)
	}
	return strings.TrimSuffix(info.URL, "/") + "/a/" + id + "?k=" + key, nil
}

func linkPath(dir, key string) string {
	h := sha256.Sum256([]byte(key))
	return filepath.Join(dir, linksDir, hex.EncodeToString(h[:])+".json")
}

// CheckLink reports whether key is a live answer link for ask id, without
// using it up (ErrBadLink when not).
func CheckLink(dir, id, key string) error {
	if !validID(id) || len(key) != 64 {
		return ErrBadLink
	}
	b, err := readBounded(linkPath(dir, key))
	if err != nil {
		return ErrBadLink
	}
	var l link
	if decodeStrict(b, &l) != nil || subtle.ConstantTimeCompare([]byte(l.AskID), []byte(id)) != 1 {
		return ErrBadLink
	}
	return nil
}

// ConsumeLink uses up key for ask id: of concurrent callers exactly one
// succeeds (the removal of the file is the use), the others get ErrBadLink.
func ConsumeLink(dir, id, key string) error {
	if err := CheckLink(dir, id, key); err != nil {
		return err
	}
	if err := os.Remove(linkPath(dir, key)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ErrBadLink
		}
		return fmt.Errorf("inbox: %w", err)
	}
	return nil
}

// removeLinks removes every answer link of ask id (the ask is gone).
func removeLinks(dir, id string) {
	entries, err := os.ReadDir(filepath.Join(dir, linksDir))
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, linksDir, e.Name())
		b, err := readBounded(p)
		if err != nil {
			continue
		}
		var l link
		if decodeStrict(b, &l) == nil && l.AskID == id {
			os.Remove(p)
		}
	}
}
