package identity

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TokenKey is how a token file names a token: "sha256:" and the lower-case
// hex SHA-256 of the token's bytes. The file never holds a token itself,
// so reading it grants nothing.
func TokenKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// maxTokensFile bounds the tokens file: a team's file is kilobytes.
const maxTokensFile = 8 << 20

// tokensRecheck is how often, at most, Authenticate looks whether the file
// changed: a revoked token stops working within about this long.
const tokensRecheck = time.Second

// Tokens authenticates bearer tokens listed, hashed, in a JSON file (see
// LoadTokens). It re-reads the file when it changes; a change that does not
// load is logged and the last good set is kept, so a typo does not lock the
// whole team out.
type Tokens struct {
	path    string
	recheck time.Duration
	set     atomic.Pointer[tokenSet]
	// next is when Authenticate may next stat the file (UnixNano); the
	// goroutine that moves it does the stat, the others carry on.
	next   atomic.Int64
	reload sync.Mutex
}

// tokenSet is one load of the file.
type tokenSet struct {
	entries []tokenEntry
	stamp   fileStamp
}

type tokenEntry struct {
	hash      [sha256.Size]byte
	principal Principal
}

// fileStamp is what tells a changed file from the one loaded.
type fileStamp struct {
	mod  time.Time
	size int64
}

// LoadTokens reads a tokens file: a JSON object whose keys are
// "sha256:<hex of the token>" and whose values are {"principal": "...",
// "groups": [...]}. Any other key, an empty principal or a key that is not
// a SHA-256 is an error naming the file, line and column.
func LoadTokens(path string) (*Tokens, error) {
	t := &Tokens{path: path, recheck: tokensRecheck}
	set, err := readTokens(path)
	if err != nil {
		return nil, err
	}
	t.set.Store(set)
	t.next.Store(time.Now().Add(t.recheck).UnixNano())
	return t, nil
}

// Path is the file t reads.
func (t *Tokens) Path() string { return t.path }

// Reload re-reads the file now. On error the last good set stays in force.
func (t *Tokens) Reload() error {
	t.reload.Lock()
	defer t.reload.Unlock()
	set, err := readTokens(t.path)
	if err != nil {
		return err
	}
	t.set.Store(set)
	return nil
}

// Authenticate accepts a bearer token whose hash the file lists.
func (t *Tokens) Authenticate(r *http.Request) (Principal, error) {
	token, err := BearerToken(r)
	if err != nil {
		return Principal{}, err
	}
	t.maybeReload()
	if p, ok := t.set.Load().lookup(token); ok {
		return p, nil
	}
	return Principal{}, unrecognized{invalidToken("the token is not one this server issued, or it was revoked")}
}

// lookup compares the token's hash with every entry in constant time and
// without stopping at a match, so timing says nothing about which entry,
// or how much of one, a guess matched.
func (s *tokenSet) lookup(token string) (Principal, bool) {
	sum := sha256.Sum256([]byte(token))
	found := -1
	for i := range s.entries {
		if subtle.ConstantTimeCompare(s.entries[i].hash[:], sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Principal{}, false
	}
	// Each caller gets its own groups, so none can change another's.
	p := s.entries[found].principal
	p.Groups = slices.Clone(p.Groups)
	return p, true
}

// maybeReload stats the file at most once per recheck interval, and re-reads
// it when its size or modification time moved.
func (t *Tokens) maybeReload() {
	now := time.Now().UnixNano()
	next := t.next.Load()
	if now < next || !t.next.CompareAndSwap(next, now+int64(t.recheck)) {
		return
	}
	fi, err := os.Stat(t.path)
	if err == nil && (fileStamp{fi.ModTime(), fi.Size()}) == t.set.Load().stamp {
		return
	}
	if err := t.Reload(); err != nil {
		slog.Error("toolwarden serve: the tokens file changed but does not load; the previous tokens stay in force until it is fixed", "error", err)
	}
}

// tokenFileEntry is one value of the file; unknown fields are errors.
type tokenFileEntry struct {
	Principal string   `json:"principal"`
	Groups    []string `json:"groups"`
}

func readTokens(path string) (*tokenSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the tokens file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxTokensFile+1))
	if err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", path, err)
	}
	if len(data) > maxTokensFile {
		return nil, fmt.Errorf("tokens file %s: larger than %d MiB; a tokens file lists hashes, not tokens", path, maxTokensFile>>20)
	}
	entries, err := parseTokens(data)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			line, col := lineCol(data, pe.offset)
			return nil, fmt.Errorf("%s:%d:%d: %s", path, line, col, pe.msg)
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &tokenSet{entries: entries, stamp: fileStamp{fi.ModTime(), fi.Size()}}, nil
}

// posError is a problem at a byte offset of the file.
type posError struct {
	offset int64
	msg    string
}

func (e *posError) Error() string { return e.msg }

const tokensHint = `: write {"sha256:<hex of the token>": {"principal": "alice", "groups": ["dev"]}}`

// parseTokens walks the top-level object key by key, so that each problem
// has the offset of the entry it is about and duplicate keys are caught
// (encoding/json would silently keep the last).
func parseTokens(data []byte) ([]tokenEntry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, syntaxOr(err, &posError{0, "the file is not a JSON object" + tokensHint})
	}
	var out []tokenEntry
	seen := map[[sha256.Size]byte]bool{}
	for dec.More() {
		at := skipSeparators(data, dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxOr(err, nil)
		}
		e, err := parseTokenEntry(dec, tok.(string), at)
		if err != nil {
			return nil, err
		}
		if seen[e.hash] {
			return nil, &posError{at, "this token hash is listed twice: keep one entry per token"}
		}
		seen[e.hash] = true
		out = append(out, e)
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxOr(err, nil)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &posError{dec.InputOffset(), "text after the JSON object"}
	}
	return out, nil
}

// parseTokenEntry reads one key and its value. The key's text is never put
// in a message: if it is a token written in clear, it must not reach a log.
func parseTokenEntry(dec *json.Decoder, key string, at int64) (tokenEntry, error) {
	var e tokenEntry
	hexPart, ok := strings.CutPrefix(key, "sha256:")
	sum, err := hex.DecodeString(hexPart)
	if !ok || err != nil || len(sum) != sha256.Size {
		return e, &posError{at, `this key is not "sha256:" and 64 hex digits; store the token's hash, never the token (printf %s "$TOKEN" | sha256sum)`}
	}
	copy(e.hash[:], sum)
	var v tokenFileEntry
	if err := dec.Decode(&v); err != nil {
		return e, syntaxOr(err, &posError{at, "bad entry: " + err.Error() + tokensHint})
	}
	if err := checkName(v.Principal); err != nil {
		return e, &posError{at, "principal: " + err.Error()}
	}
	for _, g := range v.Groups {
		if strings.TrimSpace(g) == "" {
			return e, &posError{at, "groups: an empty group name; remove it"}
		}
	}
	e.principal = Principal{Name: v.Principal, Groups: v.Groups, Via: "token"}
	return e, nil
}

// checkName refuses principal names policy could not tell apart from
// something else: empty ones, and "group:..." which approver lists read as
// a group.
func checkName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New(`empty: every token names its principal, e.g. "principal": "alice"`)
	case strings.HasPrefix(name, "group:"):
		return errors.New(`a principal name cannot start with "group:" (policy reads that as a group)`)
	}
	return nil
}

// syntaxOr turns a JSON syntax error into a posError at its offset, and
// any other error into fallback (or itself when fallback is nil).
func syntaxOr(err error, fallback *posError) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &posError{se.Offset, "JSON syntax: " + se.Error()}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && fallback != nil {
		return &posError{fallback.offset, fmt.Sprintf("%s: expected %s, got a JSON %s%s", te.Field, te.Type, te.Value, tokensHint)}
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return &posError{0, "the file ends early (an unclosed object?)" + tokensHint}
	}
	if fallback != nil {
		return fallback
	}
	return err
}

// skipSeparators moves off past the blanks and comma before the next
// token, so a position names the key itself.
func skipSeparators(data []byte, off int64) int64 {
	for off < int64(len(data)) && bytes.IndexByte([]byte(" \t\r\n,"), data[off]) >= 0 {
		off++
	}
	return off
}

// lineCol is the 1-based line and column of byte offset off.
func lineCol(data []byte, off int64) (int, int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return line, col
}
