package channel

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// StateStore keeps the outstanding request states of a shared Signer, so
// that a state minted by one replica is redeemed, once, by any other
// (internal/store implements it over SQLite and Postgres).
type StateStore interface {
	// MintState records nonce as outstanding until expires, with parts
	// (the binding's per-field digests, to explain a refusal).
	MintState(ctx context.Context, nonce string, expires time.Time, parts string) error
	// RedeemState deletes nonce's row and returns its parts. ok is true
	// for exactly one caller, whichever replica it runs in, and only
	// while the row has not expired at now.
	RedeemState(ctx context.Context, nonce string, now time.Time) (parts string, ok bool, err error)
}

// ErrStateStore: the shared store could not say whether the state was
// still unused, so the answer is refused rather than risk using it twice.
var ErrStateStore = errors.New("the shared store could not confirm that the approval was unused, so it was refused")

// StoreError is a request state the shared store could not mint or
// redeem. Its text is what a caller reads, so it names no store
// internals (the store's host, port, database); Cause, the store's own
// error with the password hidden, is for the front end's log.
type StoreError struct {
	// Redeem: the store could not redeem (errors.Is ErrStateStore);
	// otherwise it could not record a new state.
	Redeem bool
	Cause  error
}

func (e *StoreError) Error() string {
	if e.Redeem {
		return ErrStateStore.Error() + " (the store is unreachable; try again once it answers)"
	}
	return "the shared store is unreachable, so no request state was recorded; try again once it answers"
}

// Is makes a redeem failure errors.Is ErrStateStore.
func (e *StoreError) Is(target error) bool { return e.Redeem && target == ErrStateStore }

func (e *StoreError) Unwrap() error { return e.Cause }

// StateKeyLabel derives a shared Signer's key from a secret every replica
// holds (serve's session secret): HMAC(secret, StateKeyLabel). The label
// keeps a request state's MAC from being usable as any other MAC made
// with the same secret (a session id's).
const StateKeyLabel = "toolwarden request states v1"

// SharedStateKey is the request-state key of every replica holding secret.
func SharedStateKey(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(StateKeyLabel))
	return m.Sum(nil)
}

// A shared state reads "tw2." payload "." minted-MAC "." binding-MAC. The
// first MAC, over the payload alone, proves this key minted the nonce and
// expiry, so that a forged state is refused before the store is touched
// (it never costs a write). The second binds the state to its call as a
// local state's MAC does; the parts kept in the store only explain a
// refusal, they never accept one (a row altered in the database binds
// nothing).
const (
	sharedPrefix  = "tw2."
	sharedVersion = 2
	// storeTimeout bounds one store round trip of Mint or Redeem, which
	// have no context of their own: a slow store refuses, it does not
	// hang the call.
	storeTimeout = 5 * time.Second
)

// NewSharedSigner returns a Signer whose outstanding states live in
// states, under key (SharedStateKey of a secret every replica holds), so
// that any replica with the same key and store redeems a state minted by
// any other, exactly once. States live for ttl. A key of other than 32
// bytes is hashed to 32.
func NewSharedSigner(key []byte, ttl time.Duration, states StateStore) *Signer {
	s := &Signer{ttl: ttl, now: time.Now, states: states}
	if len(key) == len(s.key) {
		copy(s.key[:], key)
	} else {
		s.key = sha256.Sum256(key)
	}
	return s
}

// mintShared is Mint for a shared Signer: the nonce is recorded in the
// store before the state is handed out.
func (s *Signer) mintShared(b Binding) (string, error) {
	var payload [payloadLen]byte
	payload[0] = sharedVersion
	if _, err := rand.Read(payload[1 : 1+nonceLen]); err != nil {
		return "", err
	}
	expires := s.now().Add(s.ttl)
	binary.BigEndian.PutUint64(payload[1+nonceLen:], uint64(expires.UnixNano()))
	parts, err := digestParts(b)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := s.states.MintState(ctx, hex.EncodeToString(payload[1:1+nonceLen]), expires, parts.text()); err != nil {
		return "", &StoreError{Cause: err}
	}
	minted := s.mintedMAC(payload[:])
	bound := s.mac(payload[:], parts)
	enc := base64.RawURLEncoding.EncodeToString
	return sharedPrefix + enc(payload[:]) + "." + enc(minted[:]) + "." + enc(bound[:]), nil
}

// redeemShared is Redeem for a shared Signer. Every state this key minted
// is consumed by the attempt, even one answered for another call, so a
// client cannot probe a state until it fits.
func (s *Signer) redeemShared(state string, b Binding) error {
	payload, minted, bound, ok := parseShared(state)
	if !ok {
		return ErrForged
	}
	want := s.mintedMAC(payload[:])
	if !hmac.Equal(minted[:], want[:]) {
		return ErrForged
	}
	parts, partsErr := digestParts(b)
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	stored, live, err := s.states.RedeemState(ctx, hex.EncodeToString(payload[1:1+nonceLen]), s.now())
	if err != nil {
		return &StoreError{Redeem: true, Cause: err}
	}
	if !live {
		expires := time.Unix(0, int64(binary.BigEndian.Uint64(payload[1+nonceLen:])))
		if !s.now().Before(expires) {
			return ErrExpired
		}
		return ErrReplayed
	}
	if partsErr != nil {
		return fmt.Errorf("%w: %v", ErrArgumentsChanged, partsErr)
	}
	if wantBound := s.mac(payload[:], parts); hmac.Equal(bound[:], wantBound[:]) {
		return nil
	}
	return whatChanged(stored, parts)
}

// whatChanged says which part of the binding moved, from the parts the
// store kept for the state (unreadable parts: the arguments, as a local
// Signer says when nothing else differs).
func whatChanged(stored string, now bindingParts) error {
	was, ok := parsePartsText(stored)
	switch {
	case !ok:
		return ErrArgumentsChanged
	case was.session != now.session:
		return ErrWrongSession
	case was.definition != now.definition:
		return ErrDefinitionChanged
	case was.scopes != now.scopes:
		return ErrScopeChanged
	}
	return ErrArgumentsChanged
}

// mintedMAC proves the payload (nonce, expiry) was minted under s.key.
func (s *Signer) mintedMAC(payload []byte) [32]byte {
	m := hmac.New(sha256.New, s.key[:])
	m.Write([]byte("minted\x00"))
	m.Write(payload)
	var out [32]byte
	m.Sum(out[:0])
	return out
}

// text is the parts as the store keeps them: four hex digests.
func (p bindingParts) text() string {
	return strings.Join([]string{
		hex.EncodeToString(p.session[:]), hex.EncodeToString(p.definition[:]),
		hex.EncodeToString(p.arguments[:]), hex.EncodeToString(p.scopes[:]),
	}, ".")
}

func parsePartsText(t string) (bindingParts, bool) {
	var p bindingParts
	fields := strings.Split(t, ".")
	if len(fields) != 4 {
		return p, false
	}
	for i, dst := range []*[32]byte{&p.session, &p.definition, &p.arguments, &p.scopes} {
		b, err := hex.DecodeString(fields[i])
		if err != nil || len(b) != len(dst) {
			return p, false
		}
		copy(dst[:], b)
	}
	return p, true
}

// parseShared splits a shared state, with one spelling per state (strict
// base64) as parse does for a local one.
func parseShared(state string) (payload [payloadLen]byte, minted, bound [macLen]byte, ok bool) {
	rest, found := strings.CutPrefix(state, sharedPrefix)
	if !found {
		return payload, minted, bound, false
	}
	fields := strings.Split(rest, ".")
	if len(fields) != 3 {
		return payload, minted, bound, false
	}
	if !decodeExact(payload[:], fields[0]) || payload[0] != sharedVersion {
		return payload, minted, bound, false
	}
	if !decodeExact(minted[:], fields[1]) || !decodeExact(bound[:], fields[2]) {
		return payload, minted, bound, false
	}
	return payload, minted, bound, true
}

// decodeExact decodes s (strict raw URL base64) into exactly dst.
func decodeExact(dst []byte, s string) bool {
	if base64.RawURLEncoding.DecodedLen(len(s)) != len(dst) {
		return false
	}
	n, err := strictB64.Decode(dst, []byte(s))
	return err == nil && n == len(dst)
}

// LogStoreCause logs why the shared store refused a request state, when
// err is a *StoreError: the caller's refusal says only that the store is
// unreachable (no store host, port or database), so the cause is kept in
// the front end's log, with attrs saying which call it was.
func LogStoreCause(log *slog.Logger, err error, attrs ...any) {
	var se *StoreError
	if log == nil || !errors.As(err, &se) {
		return
	}
	log.Error("shared store: a request state was refused, the store did not answer; the caller is told to try again",
		append(attrs, "redeem", se.Redeem, "err", se.Cause)...)
}
