package serve

import (
	"testing"
	"time"
)

// FuzzSessionIDIsAcceptedOnlyAsMinted: whatever a client sends as
// Mcp-Session-Id, verifying it never panics; an id accepted for alice is
// refused for anyone else, and every other spelling of it (one character
// changed, as a non-canonical base64 tail would allow) is refused, so an
// ended session cannot be reopened under a variant of its id.
func FuzzSessionIDIsAcceptedOnlyAsMinted(f *testing.F) {
	s := newSessionSeal([]byte("0123456789abcdef0123456789abcdef"), time.Hour)
	minted := s.mint("alice")
	f.Add(minted)
	f.Add(minted + "A")
	f.Add(minted[:len(minted)-1])
	f.Add("tws1.")
	f.Add("tws1.AAAA.BBBB")
	f.Add("mcp-session-00000000-0000-0000-0000-000000000000")
	f.Fuzz(func(t *testing.T, id string) {
		if s.verify(id, "alice") != nil {
			return
		}
		if s.verify(id, "mallory") == nil {
			t.Fatalf("alice's id %q accepted for mallory", id)
		}
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
		for i := range len(id) {
			for _, c := range []byte(alphabet) {
				if c == id[i] {
					continue
				}
				v := id[:i] + string(c) + id[i+1:]
				if s.verify(v, "alice") == nil {
					t.Fatalf("a variant %q of the accepted id %q is accepted too", v, id)
				}
			}
		}
	})
}
