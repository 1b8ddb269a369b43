package session

import (
	"maps"
	"strings"
	"testing"
	"time"
)

// FuzzParseGrants: any bytes are refused or read as grants; what is read
// writes back to bytes that read as the same grants, so an add or revoke
// never changes the grants it did not touch.
func FuzzParseGrants(f *testing.F) {
	h := strings.Repeat("ab", 32)
	for _, seed := range []string{
		`{"version": 1, "approvals": []}`,
		`{"version": 1, "approvals": [{"app": "fs", "server": "fs", "tool": "t", "definition_hash": "` + h + `", "granted_at": "2026-01-02T03:04:05Z"}]}`,
		`{"version": 1, "approvals": [{"app": "a", "server": "s", "connector": "c", "tool": "t", "definition_hash": "` + h + `", "granted_at": "2026-01-02T03:04:05.123456789+02:00"}]}`,
		`{"version": 2}`, `{}`, ``, `[]`, `{"version": 1, "approvals": null}`, `{"version": 1.5}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		grants, err := parseGrants("approvals.json", data)
		if err != nil {
			if grants != nil {
				t.Fatal("grants returned with an error")
			}
			return
		}
		out, err := encodeGrants(grants)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseGrants("approvals.json", out)
		if err != nil {
			t.Fatalf("what was read does not read back: %v\n%s", err, out)
		}
		if !maps.EqualFunc(grants, again, func(a, b time.Time) bool { return a.Equal(b) }) {
			t.Fatalf("grants changed on a round trip:\n%v\n%v", grants, again)
		}
	})
}
