package channel

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// Binding is what an approval is for: one call of one tool definition with
// one set of arguments, in one session. A request state is valid only for
// the exact binding it was minted for.
type Binding struct {
	Session        string
	Server         string
	Tool           string
	DefinitionHash string
	// Arguments is the call's arguments object as raw JSON. It is hashed in
	// canonical form (sorted keys, no insignificant space; see
	// ArgumentsHash), so a client that re-serializes the same arguments on
	// its retry still matches, and different arguments never do, down to a
	// lone surrogate.
	Arguments json.RawMessage
	// Scopes are the scopes the question's scoped option remembers
	// (policy.ScopesText of the decision's), "" when it offers none: an
	// answer cannot remember a scope other than the one the human was
	// shown.
	Scopes string
}

// Errors returned by Redeem. Each says why an answer was refused; all of
// them mean the call is not approved.
var (
	// ErrForged: the state was not minted by this process (or is garbled).
	ErrForged = errors.New("the approval does not answer a question this proxy asked (forged or garbled request state)")
	// ErrReplayed: the state was minted here but has already been used, or
	// was dropped because too many asks were left unanswered.
	ErrReplayed = errors.New("the approval was already used (request states are single-use)")
	// ErrExpired: the state is older than its time to live.
	ErrExpired = errors.New("the approval expired before it was used")
	// ErrArgumentsChanged: the retry carries different arguments from the
	// call that was asked about.
	ErrArgumentsChanged = errors.New("the arguments differ from the ones the user was asked to approve")
	// ErrDefinitionChanged: the tool's definition (or the tool, or the
	// server) differs from the one the user was asked about.
	ErrDefinitionChanged = errors.New("the tool or its definition changed after the user was asked")
	// ErrScopeChanged: the scopes the question offered to remember
	// differ from the ones the retried call's decision offers.
	ErrScopeChanged = errors.New("the scope offered for remembering changed after the user was asked")
	// ErrWrongSession: the state was minted for another session.
	ErrWrongSession = errors.New("the approval belongs to another session")
)

// Signer mints and redeems request states: opaque tokens a proxy hands to a
// client with an approval question and gets back with the answer (MCP's
// multi round-trip requestState). A state is an HMAC-SHA256 over a random
// nonce, an expiry and the Binding, under a key drawn at random when the
// Signer is made. It carries nothing secret: the binding is in the MAC, not
// in the token. Each state is single-use. A Signer is safe for concurrent use.
type Signer struct {
	key [32]byte
	ttl time.Duration
	max int
	now func() time.Time
	// states, when set, keeps the outstanding states instead of the map
	// below (NewSharedSigner: every replica of a store redeems them).
	states StateStore

	mu          sync.Mutex
	outstanding map[[nonceLen]byte]pending
	order       [][nonceLen]byte // FIFO of outstanding nonces, for eviction
}

type pending struct {
	digest  [32]byte // binding digest, to say what changed on a mismatch
	parts   bindingParts
	expires time.Time
}

// bindingParts are per-field digests of a binding, kept only to explain a
// refused state (which field differs), never to accept one.
type bindingParts struct {
	session, definition, arguments, scopes [32]byte
}

const (
	nonceLen   = 16
	payloadLen = 1 + nonceLen + 8 // version, nonce, expiry (unix nanoseconds)
	macLen     = sha256.Size
	version    = 1
	prefix     = "tw1."
)

// NewSigner returns a Signer with a fresh random key whose states live for
// ttl. At most maxOutstanding states wait for an answer at once; minting
// more drops the oldest (its answer is then refused as replayed).
func NewSigner(ttl time.Duration, maxOutstanding int) *Signer {
	s := &Signer{ttl: ttl, max: maxOutstanding, now: time.Now, outstanding: map[[nonceLen]byte]pending{}}
	if _, err := rand.Read(s.key[:]); err != nil {
		panic("approval: no randomness for the signing key: " + err.Error())
	}
	if s.max <= 0 {
		s.max = 1024
	}
	return s
}

// TTL is how long a minted state stays valid.
func (s *Signer) TTL() time.Duration { return s.ttl }

// Mint returns a new single-use state for b.
func (s *Signer) Mint(b Binding) (string, error) {
	if s.states != nil {
		return s.mintShared(b)
	}
	var payload [payloadLen]byte
	payload[0] = version
	if _, err := rand.Read(payload[1 : 1+nonceLen]); err != nil {
		return "", err
	}
	now := s.now()
	expires := now.Add(s.ttl)
	binary.BigEndian.PutUint64(payload[1+nonceLen:], uint64(expires.UnixNano()))
	parts, err := digestParts(b)
	if err != nil {
		return "", err
	}
	mac := s.mac(payload[:], parts)

	var nonce [nonceLen]byte
	copy(nonce[:], payload[1:1+nonceLen])
	s.mu.Lock()
	s.evictLocked(now)
	s.outstanding[nonce] = pending{digest: mac, parts: parts, expires: expires}
	s.order = append(s.order, nonce)
	s.mu.Unlock()

	return prefix + base64.RawURLEncoding.EncodeToString(payload[:]) + "." + base64.RawURLEncoding.EncodeToString(mac[:]), nil
}

// Redeem checks that state was minted by this Signer for exactly b, has not
// expired and was not used before, and consumes it. Any state whose nonce
// this Signer knows is consumed by the attempt, even a failed one, so a
// client cannot probe a state until it fits.
func (s *Signer) Redeem(state string, b Binding) error {
	if s.states != nil {
		return s.redeemShared(state, b)
	}
	payload, mac, ok := parse(state)
	if !ok {
		return ErrForged
	}
	var nonce [nonceLen]byte
	copy(nonce[:], payload[1:1+nonceLen])
	s.mu.Lock()
	p, known := s.outstanding[nonce]
	if known {
		delete(s.outstanding, nonce)
	}
	s.mu.Unlock()

	parts, err := digestParts(b)
	if err != nil {
		if !known {
			return ErrForged
		}
		return fmt.Errorf("%w: %v", ErrArgumentsChanged, err)
	}
	want := s.mac(payload[:], parts)

	if !hmac.Equal(mac[:], want[:]) {
		if !known || !hmac.Equal(mac[:], p.digest[:]) {
			return ErrForged
		}
		// A state we minted, answered for a different call: say what moved.
		switch {
		case p.parts.session != parts.session:
			return ErrWrongSession
		case p.parts.definition != parts.definition:
			return ErrDefinitionChanged
		case p.parts.scopes != parts.scopes:
			return ErrScopeChanged
		default:
			return ErrArgumentsChanged
		}
	}
	if !known {
		return ErrReplayed
	}
	expires := time.Unix(0, int64(binary.BigEndian.Uint64(payload[1+nonceLen:])))
	if !s.now().Before(expires) {
		return ErrExpired
	}
	return nil
}

// Outstanding is the number of states waiting for an answer (0 for a
// shared Signer, whose states are counted in its store).
func (s *Signer) Outstanding() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.outstanding)
}

// evictLocked drops expired states and, past the cap, the oldest ones.
func (s *Signer) evictLocked(now time.Time) {
	i := 0
	for ; i < len(s.order); i++ {
		n := s.order[i]
		p, ok := s.outstanding[n]
		if !ok {
			continue // redeemed already
		}
		if now.Before(p.expires) && len(s.outstanding) < s.max {
			break
		}
		delete(s.outstanding, n)
	}
	if i > 0 {
		s.order = append(s.order[:0], s.order[i:]...)
	}
}

func (s *Signer) mac(payload []byte, p bindingParts) [32]byte {
	m := hmac.New(sha256.New, s.key[:])
	m.Write(payload)
	m.Write(p.session[:])
	m.Write(p.definition[:])
	m.Write(p.arguments[:])
	m.Write(p.scopes[:])
	var out [32]byte
	m.Sum(out[:0])
	return out
}

var strictB64 = base64.RawURLEncoding.Strict()

func parse(state string) (payload [payloadLen]byte, mac [macLen]byte, ok bool) {
	rest, found := strings.CutPrefix(state, prefix)
	if !found {
		return payload, mac, false
	}
	p64, m64, found := strings.Cut(rest, ".")
	if !found || base64.RawURLEncoding.DecodedLen(len(p64)) != payloadLen || base64.RawURLEncoding.DecodedLen(len(m64)) != macLen {
		return payload, mac, false
	}
	// Strict: one state has exactly one spelling.
	if n, err := strictB64.Decode(payload[:], []byte(p64)); err != nil || n != payloadLen || payload[0] != version {
		return payload, mac, false
	}
	if n, err := strictB64.Decode(mac[:], []byte(m64)); err != nil || n != macLen {
		return payload, mac, false
	}
	return payload, mac, true
}

func digestParts(b Binding) (bindingParts, error) {
	var p bindingParts
	p.session = sum(b.Session)
	p.definition = sum(b.Server, b.Tool, b.DefinitionHash)
	p.scopes = sum(b.Scopes)
	h, err := ArgumentsHash(b.Arguments)
	if err != nil {
		return p, err
	}
	p.arguments = h
	return p, nil
}

// sum hashes fields with their lengths, so ("ab","c") and ("a","bc") differ.
func sum(fields ...string) [32]byte {
	h := sha256.New()
	var n [8]byte
	for _, f := range fields {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// ArgumentsHash is SHA-256 over the canonical form of a call's arguments
// (rawjson.Canonical: object keys sorted, no insignificant space, numbers
// as written). Absent or null arguments hash as the empty object.
//
// The canonical form is built from the raw bytes, never from a Go decode:
// encoding/json turns every lone surrogate and invalid UTF-8 byte into
// U+FFFD, so "\ud800" and "\udfff" (which a JavaScript server tells apart)
// would hash alike, and a state minted for one would be redeemed for the
// other. Arguments with a key twice in one object have no hash.
func ArgumentsHash(args json.RawMessage) ([32]byte, error) {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || string(t) == "null" {
		t = []byte("{}")
	}
	c, err := rawjson.Canonical(t)
	if err != nil {
		return [32]byte{}, fmt.Errorf("arguments: %w", err)
	}
	return sha256.Sum256(c), nil
}

// ArgumentsHashHex is ArgumentsHash in lower-case hex, or "" for arguments
// that are not JSON.
func ArgumentsHashHex(args json.RawMessage) string {
	h, err := ArgumentsHash(args)
	if err != nil {
		return ""
	}
	return hex.EncodeToString(h[:])
}

// BindingFor is what an answer to the ask about call is bound to: the
// call's session, server, tool definition and exact arguments, and the
// scopes its decision offers to remember. Every front end that mints or
// redeems a request state binds it with this, so that none forgets a part.
func BindingFor(call host.Call, d *host.Decision) Binding {
	return Binding{
		Session:        call.Session,
		Server:         call.Server,
		Tool:           call.Tool.Name,
		DefinitionHash: d.DefinitionHash,
		Arguments:      call.Arguments,
		Scopes:         policy.ScopesText(d.Scopes),
	}
}
