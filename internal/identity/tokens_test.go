package identity_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
)

func TestATokenInTheFileNamesItsPrincipalAndGroups(t *testing.T) {
	t.Parallel()
	path := identitytest.WriteTokens(t, t.TempDir(), map[string]identity.Principal{
		"tok-alice": {Name: "alice", Groups: []string{"dev"}},
		"tok-bob":   {Name: "bob"},
	})
	tokens, err := identity.LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tokens.Authenticate(bearer("tok-alice"))
	if err != nil || p.Name != "alice" || !p.InGroup("dev") || p.Via != "token" {
		t.Fatalf("alice: %+v, %v", p, err)
	}
	p.Groups[0] = "admins" // a caller changing its copy changes no one else's
	if p, err := tokens.Authenticate(bearer("tok-alice")); err != nil || p.Groups[0] != "dev" {
		t.Fatalf("alice again: %+v, %v", p, err)
	}
	if p, err := tokens.Authenticate(bearer("tok-bob")); err != nil || p.Name != "bob" || len(p.Groups) != 0 {
		t.Fatalf("bob: %+v, %v", p, err)
	}
}

func TestTokensTheFileDoesNotListAreRefused(t *testing.T) {
	t.Parallel()
	path := identitytest.WriteTokens(t, t.TempDir(), map[string]identity.Principal{"tok-alice": {Name: "alice"}})
	tokens, err := identity.LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"tok-alicf", "tok-alice0", "tok-alic", identity.TokenKey("tok-alice"), "TOK-ALICE"} {
		if p, err := tokens.Authenticate(bearer(tok)); err == nil {
			t.Errorf("token %q accepted as %+v", tok, p)
		} else if strings.Contains(err.Error(), tok) {
			t.Errorf("error %q quotes the token", err)
		}
	}
}

func TestABadTokensFileIsRefusedWithItsPlaceAndTheFix(t *testing.T) {
	t.Parallel()
	key := identity.TokenKey("tok")
	cases := []struct {
		name, text, want string
	}{
		{"a token written in clear", "{\n  \"sk-live-123\": {\"principal\": \"alice\"}\n}", `:2:3: this key is not "sha256:" and 64 hex digits`},
		{"a short hash", `{"sha256:abcd": {"principal": "alice"}}`, `:1:2: this key is not "sha256:"`},
		{"an unknown key in an entry", "{\"" + key + "\": {\"principal\": \"alice\", \"admin\": true}}", `unknown field "admin"`},
		{"an empty principal", "{\n\"" + key + "\": {\"principal\": \"\"}}", ":2:1: principal: empty"},
		{"no principal", "{\"" + key + "\": {\"groups\": [\"dev\"]}}", "principal: empty"},
		{"a principal that reads as a group", "{\"" + key + "\": {\"principal\": \"group:ops\"}}", `cannot start with "group:"`},
		{"groups that are not a list", "{\"" + key + "\": {\"principal\": \"a\", \"groups\": \"dev\"}}", "groups: expected []string"},
		{"an empty group", "{\"" + key + "\": {\"principal\": \"a\", \"groups\": [\"\"]}}", "empty group name"},
		{"a JSON syntax error", "{\n  \"" + key + "\": {\"principal\": \"a\",}\n}", ":2:"},
		{"a list instead of an object", `["x"]`, "not a JSON object"},
		{"a hash listed twice", "{\"" + key + "\": {\"principal\": \"a\"},\n \"" + key[:7] + strings.ToUpper(key[7:]) + "\": {\"principal\": \"b\"}}", ":2:2: this token hash is listed twice"},
		{"an unclosed object", "{\"" + key + "\": {\"principal\": \"a\"}", "ends early"},
		{"text after the object", "{}\n{}", "text after"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens.json")
			if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := identity.LoadTokens(path)
			if err == nil {
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error = %q, want the path and %q", err, c.want)
			}
			if strings.Contains(err.Error(), "sk-live-123") {
				t.Errorf("error quotes a clear-text token: %q", err)
			}
		})
	}
}

func TestAMissingTokensFileIsAnErrorNamingIt(t *testing.T) {
	t.Parallel()
	_, err := identity.LoadTokens(filepath.Join(t.TempDir(), "nope.json"))
	if err == nil || !strings.Contains(err.Error(), "cannot read the tokens file") || !strings.Contains(err.Error(), "nope.json") {
		t.Fatalf("error = %v", err)
	}
}

func TestAnEditedTokensFileTakesEffectWithoutARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := identitytest.WriteTokens(t, dir, map[string]identity.Principal{"tok-old": {Name: "alice"}})
	tokens, err := identity.LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	identity.SetRecheck(tokens, 0)
	if _, err := tokens.Authenticate(bearer("tok-old")); err != nil {
		t.Fatal(err)
	}
	identitytest.WriteTokens(t, dir, map[string]identity.Principal{"tok-new": {Name: "alice"}, "tok-other": {Name: "bob"}})
	if _, err := tokens.Authenticate(bearer("tok-old")); err == nil {
		t.Error("a revoked token is still accepted")
	}
	if p, err := tokens.Authenticate(bearer("tok-new")); err != nil || p.Name != "alice" {
		t.Errorf("new token: %+v, %v", p, err)
	}
}

func TestATokensFileBrokenByAnEditKeepsTheLastGoodTokens(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := identitytest.WriteTokens(t, dir, map[string]identity.Principal{"tok-alice": {Name: "alice"}})
	tokens, err := identity.LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	identity.SetRecheck(tokens, 0)
	if err := os.WriteFile(path, []byte(`{"oops`), 0o600); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	_ = os.Chtimes(path, future, future)
	if p, err := tokens.Authenticate(bearer("tok-alice")); err != nil || p.Name != "alice" {
		t.Fatalf("after a bad edit: %+v, %v", p, err)
	}
	if err := tokens.Reload(); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Reload of a broken file: %v", err)
	}
}

// Callers authenticating while the file is rewritten each get the old or
// the new answer, never a torn one (run with -race).
func TestCallersDuringATokensReloadGetTheOldOrTheNewAnswer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := identitytest.WriteTokens(t, dir, map[string]identity.Principal{"tok-a": {Name: "alice"}})
	tokens, err := identity.LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	identity.SetRecheck(tokens, 0)
	done := make(chan struct{})
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				if p, err := tokens.Authenticate(bearer("tok-a")); err == nil && p.Name != "alice" {
					errs <- fmt.Errorf("tok-a named %+v", p)
					return
				}
			}
		}()
	}
	for i := range 20 {
		identitytest.WriteTokens(t, dir, map[string]identity.Principal{"tok-a": {Name: "alice"}, fmt.Sprintf("tok-%d", i): {Name: "bob"}})
	}
	close(done)
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if p, err := tokens.Authenticate(bearer("tok-19")); err != nil || p.Name != "bob" {
		t.Errorf("after the last write: %+v, %v", p, err)
	}
}
