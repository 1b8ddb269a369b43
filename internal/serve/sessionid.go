package serve

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/internal/identity"
)

// A session id of the 2025-era protocol (Mcp-Session-Id) is sealed: an
// HMAC-SHA256, under the server's session secret, over the hash of the
// principal it was issued to, a random nonce and the time it was issued.
// Any replica holding the secret verifies one without a lookup, and an id
// is good only for the principal it was issued to: another caller who
// learns it (a log, a proxy) cannot use it. See docs/RATIONALE.md.
const (
	sessionPrefix     = "tws1."
	principalHashLen  = 16
	sessionNonceLen   = 16
	sessionPayloadLen = principalHashLen + sessionNonceLen + 8
	sessionMACLen     = 32
)

// Session id errors, each a reason to answer 404 (the client then starts a
// new session, as the transport specifies).
var (
	errSessionForged    = errors.New("the session id was not issued by this gateway (forged or garbled)")
	errSessionPrincipal = errors.New("the session id was issued to another principal")
	errSessionExpired   = errors.New("the session id is older than the session lifetime")
	errNoPrincipal      = errors.New("the request carries no principal")
)

// sessionSeal mints and verifies sealed session ids. It keeps no state but
// the ids terminated here (DELETE, idle expiry), which it remembers for the
// lifetime of an id so that this replica refuses them at once.
type sessionSeal struct {
	key    []byte
	maxAge time.Duration
	now    func() time.Time

	// onEnd, if set, runs when an id is terminated (the Server forgets
	// the host session it keyed).
	onEnd func(id string)

	mu         sync.Mutex
	terminated map[string]time.Time // id -> when it would expire anyway
}

// newSessionSeal uses secret, or a random key when secret is empty (one
// process: ids do not survive a restart and no other replica accepts them).
func newSessionSeal(secret []byte, maxAge time.Duration) *sessionSeal {
	key := make([]byte, 32)
	if len(secret) > 0 {
		// Derived, so the same secret file can key other things without
		// one MAC being usable as another.
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("toolwarden serve session id v1"))
		key = m.Sum(nil)
	} else if _, err := rand.Read(key); err != nil {
		panic("serve: no randomness for the session key: " + err.Error())
	}
	return &sessionSeal{key: key, maxAge: maxAge, now: time.Now, terminated: map[string]time.Time{}}
}

// principalHash names a principal inside an id without showing its name.
func principalHash(name string) [principalHashLen]byte {
	sum := sha256.Sum256([]byte("toolwarden principal\x00" + name))
	var h [principalHashLen]byte
	copy(h[:], sum[:])
	return h
}

// mint returns a new id for principal.
func (s *sessionSeal) mint(principal string) string {
	var payload [sessionPayloadLen]byte
	ph := principalHash(principal)
	copy(payload[:], ph[:])
	if _, err := rand.Read(payload[principalHashLen : principalHashLen+sessionNonceLen]); err != nil {
		panic("serve: no randomness for a session id: " + err.Error())
	}
	binary.BigEndian.PutUint64(payload[principalHashLen+sessionNonceLen:], uint64(s.now().Unix()))
	mac := s.mac(payload[:])
	return sessionPrefix + base64.RawURLEncoding.EncodeToString(payload[:]) + "." + base64.RawURLEncoding.EncodeToString(mac)
}

func (s *sessionSeal) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(payload)
	return m.Sum(nil)
}

// open checks id and returns when it was issued. The MAC is checked before
// anything in the payload is believed.
func (s *sessionSeal) open(id string) (payload [sessionPayloadLen]byte, issued time.Time, err error) {
	rest, ok := strings.CutPrefix(id, sessionPrefix)
	if !ok {
		return payload, issued, errSessionForged
	}
	p64, m64, ok := strings.Cut(rest, ".")
	if !ok {
		return payload, issued, errSessionForged
	}
	// Strict: one spelling per id. A lenient decoder takes other tails for
	// the same bytes, and an ended session (remembered by its id's text)
	// would open again under one of them.
	p, err1 := base64.RawURLEncoding.Strict().DecodeString(p64)
	m, err2 := base64.RawURLEncoding.Strict().DecodeString(m64)
	if err1 != nil || err2 != nil || len(p) != sessionPayloadLen || len(m) != sessionMACLen {
		return payload, issued, errSessionForged
	}
	if !hmac.Equal(m, s.mac(p)) {
		return payload, issued, errSessionForged
	}
	copy(payload[:], p)
	issued = time.Unix(int64(binary.BigEndian.Uint64(p[principalHashLen+sessionNonceLen:])), 0)
	return payload, issued, nil
}

// verify checks that id is sealed here, for principal, and not too old.
func (s *sessionSeal) verify(id, principal string) error {
	payload, issued, err := s.open(id)
	if err != nil {
		return err
	}
	ph := principalHash(principal)
	if !hmac.Equal(payload[:principalHashLen], ph[:]) {
		return errSessionPrincipal
	}
	if s.maxAge > 0 && s.now().Sub(issued) > s.maxAge {
		return errSessionExpired
	}
	return nil
}

// terminate remembers id as ended here.
func (s *sessionSeal) terminate(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for k, until := range s.terminated {
		if now.After(until) {
			delete(s.terminated, k)
		}
	}
	s.terminated[id] = now.Add(s.maxAge)
}

func (s *sessionSeal) isTerminated(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.terminated[id]
	return ok
}

// ResolveSessionIdManager gives mcp-go a manager bound to the request's
// principal (server.SessionIdManagerResolver). Without a request (mcp-go's
// idle sweeper) the manager can only terminate.
func (s *sessionSeal) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	m := &sessionIDs{seal: s}
	if r != nil {
		if p, ok := identity.FromContext(r.Context()); ok {
			m.principal, m.known = p.Name, true
		}
	}
	return m
}

// sessionIDs is one request's view of the seal (server.SessionIdManager).
type sessionIDs struct {
	seal      *sessionSeal
	principal string
	known     bool
}

func (m *sessionIDs) Generate() string {
	if !m.known {
		// MCPHandler never lets a request without a principal this far;
		// an id no principal can present is the safe answer if one did.
		return m.seal.mint("\x00no principal")
	}
	return m.seal.mint(m.principal)
}

func (m *sessionIDs) Validate(id string) (isTerminated bool, err error) {
	if !m.known {
		return false, errNoPrincipal
	}
	if err := m.seal.verify(id, m.principal); err != nil {
		return false, err
	}
	return m.seal.isTerminated(id), nil
}

func (m *sessionIDs) Terminate(id string) (isNotAllowed bool, err error) {
	// Only the session's own principal may end it (mcp-go answers 405);
	// the sweeper, which has no request, ends idle ones.
	if m.known {
		if err := m.seal.verify(id, m.principal); err != nil {
			return true, nil
		}
	} else if _, _, err := m.seal.open(id); err != nil {
		return true, nil
	}
	m.seal.terminate(id)
	if m.seal.onEnd != nil {
		m.seal.onEnd(id)
	}
	return false, nil
}
