package identitytest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/identity"
)

// WriteTokens writes dir/tokens.json as an admin would: each token of
// tokens (clear text, the test's to send) stored only as its SHA-256, with
// its principal's name and groups. It returns the file's path.
func WriteTokens(t testing.TB, dir string, tokens map[string]identity.Principal) string {
	t.Helper()
	type entry struct {
		Principal string   `json:"principal"`
		Groups    []string `json:"groups,omitempty"`
	}
	doc := make(map[string]entry, len(tokens))
	for tok, p := range tokens {
		doc[identity.TokenKey(tok)] = entry{Principal: p.Name, Groups: p.Groups}
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
