package serve

import (
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/identity"
)

// managerFor is the session id manager mcp-go would get for a request by
// principal (none when principal is "").
func managerFor(s *sessionSeal, principal string) *sessionIDs {
	r := httptest.NewRequest("POST", "/mcp", nil)
	if principal != "" {
		r = r.WithContext(identity.WithPrincipal(r.Context(), identity.Principal{Name: principal}))
	}
	return s.ResolveSessionIdManager(r).(*sessionIDs)
}

func TestASealedSessionIDIsAcceptedOnlyForThePrincipalItWasIssuedTo(t *testing.T) {
	t.Parallel()
	s := newSessionSeal([]byte("0123456789abcdef0123456789abcdef"), time.Hour)
	id := managerFor(s, "alice").Generate()
	if _, err := managerFor(s, "alice").Validate(id); err != nil {
		t.Fatalf("alice's own id: %v", err)
	}
	if _, err := managerFor(s, "mallory").Validate(id); err != errSessionPrincipal {
		t.Fatalf("alice's id presented by mallory: %v, want %v", err, errSessionPrincipal)
	}
	if _, err := managerFor(s, "").Validate(id); err == nil {
		t.Fatal("an id presented without a principal was accepted")
	}
}

func TestAnotherReplicaWithTheSameSecretVerifiesAnIDWithoutALookup(t *testing.T) {
	t.Parallel()
	secret := []byte("0123456789abcdef0123456789abcdef")
	id := managerFor(newSessionSeal(secret, time.Hour), "alice").Generate()
	if _, err := managerFor(newSessionSeal(secret, time.Hour), "alice").Validate(id); err != nil {
		t.Fatalf("a replica with the same secret refused the id: %v", err)
	}
	if _, err := managerFor(newSessionSeal([]byte("another secret, another gateway!!"), time.Hour), "alice").Validate(id); err != errSessionForged {
		t.Fatalf("a gateway with another secret: %v, want %v", err, errSessionForged)
	}
	if _, err := managerFor(newSessionSeal(nil, time.Hour), "alice").Validate(id); err != errSessionForged {
		t.Fatalf("a gateway with a random secret: %v, want %v", err, errSessionForged)
	}
}

func TestForgedAndAlteredSessionIDsAreRefused(t *testing.T) {
	t.Parallel()
	s := newSessionSeal(nil, time.Hour)
	id := managerFor(s, "alice").Generate()
	payload, mac, _ := strings.Cut(strings.TrimPrefix(id, sessionPrefix), ".")
	raw, _ := base64.RawURLEncoding.DecodeString(payload)
	// Mallory's principal hash in alice's id, MAC kept.
	ph := principalHash("mallory")
	copy(raw, ph[:])
	swapped := sessionPrefix + base64.RawURLEncoding.EncodeToString(raw) + "." + mac
	for name, forged := range map[string]string{
		"empty":                            "",
		"mcp-go's kind of id":              "mcp-session-2b0b5f2c-1c4e-4b8e-9c7e-3d1f2a9b8c7d",
		"no MAC":                           sessionPrefix + payload,
		"MAC cut short":                    id[:len(id)-4],
		"principal swapped, MAC kept":      swapped,
		"one character of the MAC flipped": id[:len(id)-1] + flip(id[len(id)-1]),
	} {
		if _, err := managerFor(s, "mallory").Validate(forged); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := managerFor(s, "alice").Validate(forged); err == nil {
			t.Errorf("%s: accepted for alice", name)
		}
	}
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func TestASessionIDOlderThanItsLifetimeIsRefused(t *testing.T) {
	t.Parallel()
	s := newSessionSeal(nil, time.Hour)
	now := time.Now()
	s.now = func() time.Time { return now }
	id := managerFor(s, "alice").Generate()
	s.now = func() time.Time { return now.Add(59 * time.Minute) }
	if _, err := managerFor(s, "alice").Validate(id); err != nil {
		t.Fatalf("within its lifetime: %v", err)
	}
	s.now = func() time.Time { return now.Add(61 * time.Minute) }
	if _, err := managerFor(s, "alice").Validate(id); err != errSessionExpired {
		t.Fatalf("past its lifetime: %v, want %v", err, errSessionExpired)
	}
}

func TestOnlyTheSessionsOwnPrincipalMayEndItAndAnEndedIDStaysEnded(t *testing.T) {
	t.Parallel()
	s := newSessionSeal(nil, time.Hour)
	var ended []string
	s.onEnd = func(id string) { ended = append(ended, id) }
	id := managerFor(s, "alice").Generate()
	if notAllowed, err := managerFor(s, "mallory").Terminate(id); !notAllowed || err != nil || len(ended) != 0 {
		t.Fatalf("mallory ended alice's session: notAllowed=%v err=%v ended=%v", notAllowed, err, ended)
	}
	if terminated, err := managerFor(s, "alice").Validate(id); terminated || err != nil {
		t.Fatalf("after mallory's try: terminated=%v err=%v", terminated, err)
	}
	if notAllowed, err := managerFor(s, "alice").Terminate(id); notAllowed || err != nil || len(ended) != 1 {
		t.Fatalf("alice ending her session: notAllowed=%v err=%v ended=%v", notAllowed, err, ended)
	}
	if terminated, _ := managerFor(s, "alice").Validate(id); !terminated {
		t.Fatal("an ended session id is still accepted")
	}
}
