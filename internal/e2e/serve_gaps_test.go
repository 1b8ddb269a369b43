package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"testing"
)

// serve behind a load balancer: [serve] public_url names the URL clients
// use in the protected-resource metadata and in a 401's challenge.

// gapsChallenge posts a ping without a token and returns the challenge's
// resource_metadata URL, the metadata document at serve's own address
// under that URL's path, and the resource it names.
func gapsChallenge(t *testing.T, s *opsServe) (metaURL, resource string) {
	t.Helper()
	code, h, _ := opsPost(t, http.DefaultClient, s.url, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	m := regexp.MustCompile(`^Bearer resource_metadata="([^"]+)"$`).FindStringSubmatch(h.Get("WWW-Authenticate"))
	if code != http.StatusUnauthorized || m == nil {
		t.Fatalf("no token: %d, WWW-Authenticate %q; want 401 and one resource_metadata", code, h.Get("WWW-Authenticate"))
	}
	path := regexp.MustCompile(`^https?://[^/]+`).ReplaceAllString(m[1], "")
	resp, err := http.Get(s.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var doc struct {
		Resource string `json:"resource"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &doc) != nil {
		t.Fatalf("GET %s: %d %s", s.base+path, resp.StatusCode, body)
	}
	return m[1], doc.Resource
}

func TestServeNamesItsPublicURLInTheChallengeAndTheMetadataWhenOneIsSet(t *testing.T) {
	t.Parallel()
	tokens := opsTokens(t, "alice")
	behind := opsListen(t, "--config", opsTestserver(t, fmt.Sprintf(`
[serve]
public_url = "https://mcp.example.com/team-a/"

[serve.auth]
tokens_file = %q
`, tokens)))
	meta, resource := gapsChallenge(t, behind)
	if want := "https://mcp.example.com/.well-known/oauth-protected-resource/team-a/mcp"; meta != want {
		t.Errorf("with public_url: the challenge names %q, want %q", meta, want)
	}
	if want := "https://mcp.example.com/team-a/mcp"; resource != want {
		t.Errorf("with public_url: the metadata's resource is %q, want %q", resource, want)
	}

	direct := opsListen(t, "--config", opsTestserver(t, fmt.Sprintf("[serve.auth]\ntokens_file = %q\n", tokens)))
	meta, resource = gapsChallenge(t, direct)
	if want := direct.base + "/.well-known/oauth-protected-resource/mcp"; meta != want {
		t.Errorf("without public_url: the challenge names %q, want the bound address %q", meta, want)
	}
	if resource != direct.url {
		t.Errorf("without public_url: the metadata's resource is %q, want the bound address %q", resource, direct.url)
	}
}
