package inbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Option is one answer an ask offers. ID is a policy.Option* string
// ("allow_once", "allow_session", "always", "allow_session_scoped", "deny");
// Title is how the prompts word it.
type Option struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Hints are the effective hints an ask was decided with, as the prompts
// show them.
type Hints struct {
	// Values holds the hints that are set ("readOnlyHint": false, ...).
	Values map[string]bool `json:"values,omitempty"`
	// Trust is the server's trust level ("full", "pinned", "none").
	Trust string `json:"trust,omitempty"`
	// Drifted says the tool's definition changed since it was pinned, so
	// its declared hints are not believed.
	Drifted bool `json:"drifted,omitempty"`
}

// Ask is one pending question to a human, as every channel shows it.
type Ask struct {
	ID      string    `json:"id"` // 128-bit random hex, minted by Post
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"` // when the asker stops waiting
	PID     int       `json:"pid"`     // the asking process
	Origin  string    `json:"origin"`  // "wrap", "proxy", "hook", "sdk"
	Session string    `json:"session,omitempty"`
	Server  string    `json:"server"`
	Tool    string    `json:"tool"`
	App     string    `json:"app,omitempty"`
	// Title is the prompt's one-line title, when the asker has one.
	Title string `json:"title,omitempty"`
	// Reasons say why the call needs approval, as the prompts word them.
	Reasons []string `json:"reasons,omitempty"`
	Hints   Hints    `json:"hints"`
	// Arguments are the call's arguments exactly as the elicitation prompt
	// renders them (long values cut, flagged ones first), never raw bytes.
	Arguments string `json:"arguments"`
	// Digest is the SHA-256 (hex) of the argument bytes the call forwards.
	Digest string `json:"digest,omitempty"`
	// Scope describes what the argument-scoped option remembers, when offered.
	Scope   string   `json:"scope,omitempty"`
	Options []Option `json:"options"`
}

// Offers reports whether the ask offers the option id.
func (a *Ask) Offers(id string) bool {
	for _, o := range a.Options {
		if o.ID == id {
			return true
		}
	}
	return false
}

// Answer is the first answer recorded for an ask.
type Answer struct {
	AskID  string `json:"ask_id"`
	Option string `json:"option"`
	// Channel says where the answer came from: "inbox", "webhook-link",
	// "elicitation", ...
	Channel string    `json:"channel"`
	At      time.Time `json:"at"`
}

// Errors Respond, Wait and ConsumeLink return; test with errors.Is.
var (
	ErrUnknownAsk = errors.New("no such pending ask (answered, withdrawn, or never posted)")
	ErrExpired    = errors.New("the ask expired: the asking call stopped waiting")
	ErrAnswered   = errors.New("the ask was already answered: the first answer wins")
	ErrNotOffered = errors.New("the ask does not offer that option")
	ErrWithdrawn  = errors.New("the ask was withdrawn")
	ErrBadLink    = errors.New("the answer link is unknown, already used, or for another ask")
	ErrNoInbox    = errors.New("no inbox is running (start one with: toolwarden inbox)")
	errBadAskID   = errors.New("not an ask id (32 hex digits)")
)

// maxFile bounds every file read from the rendezvous directory: an ask's
// arguments are the prompt's rendering, already cut to a readable size.
const maxFile = 256 << 10

func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("inbox: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// validID reports whether id is 32 lowercase hex digits: ids name files, so
// anything else (a path, "..") is refused before it touches the filesystem.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range []byte(id) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// validate checks an ask read from a file or given to Post.
func (a *Ask) validate() error {
	if !validID(a.ID) {
		return fmt.Errorf("id %q: %w", a.ID, errBadAskID)
	}
	if len(a.Options) == 0 {
		return errors.New("the ask offers no options")
	}
	seen := map[string]bool{}
	for _, o := range a.Options {
		if o.ID == "" || seen[o.ID] {
			return fmt.Errorf("option %q is empty or repeated", o.ID)
		}
		seen[o.ID] = true
	}
	if a.Expires.IsZero() {
		return errors.New("the ask has no expiry (set Expires to when the call stops waiting)")
	}
	if a.Tool == "" {
		return errors.New("the ask names no tool")
	}
	return nil
}
