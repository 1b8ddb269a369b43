package identity

import (
	"strings"
	"testing"
)

// FuzzParseTokens feeds the tokens file parser arbitrary bytes: it must
// never panic, and what it accepts must be entries policy can use.
func FuzzParseTokens(f *testing.F) {
	f.Add([]byte(`{"sha256:` + strings.Repeat("ab", 32) + `": {"principal": "alice", "groups": ["dev"]}}`))
	f.Add([]byte(`{"sk-live": {"principal": "alice"}}`))
	f.Add([]byte(`{"sha256:` + strings.Repeat("0", 64) + `": {"principal": ""}}`))
	f.Add([]byte("{\n  \"a\": 1,\n}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseTokens(data)
		if err != nil {
			return
		}
		for _, e := range entries {
			if checkName(e.principal.Name) != nil || e.principal.Via != "token" {
				t.Fatalf("accepted an unusable entry %+v", e.principal)
			}
		}
	})
}
