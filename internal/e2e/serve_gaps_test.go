package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
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

// gapsCall calls tool through a 2025-era mcp-go client and returns the
// result's text, or the protocol error.
func gapsCall(t *testing.T, c *goClient, tool string) (text string, isError bool, err error) {
	t.Helper()
	res, err := c.CallTool(testContext(t), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": "hi"}}})
	if err != nil {
		return "", false, err
	}
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return text, res.IsError, nil
}

func TestServeAnswersACallToAServerNotUpWithAToolErrorThatSaysRetryAndNeverForwardsAnUnlistedTool(t *testing.T) {
	t.Parallel()
	// "slow" takes 20 s to start; "broken" never starts; "t" is up.
	cfg := opsTestserver(t, fmt.Sprintf(`
[mcp_servers.slow]
command = "sh"
args = ["-c", "sleep 20; exec %s"]
startup_timeout_sec = 60

[mcp_servers.broken]
command = "/nonexistent/toolwarden-e2e-server"
args = ["--api-key=hunter2-secret"]
`, testServer))
	s := opsListen(t, "--config", cfg)
	c := opsClient(t, s.url, nil)

	text, isErr, err := gapsCall(t, c, "slow__echo")
	if err != nil || !isErr || !strings.Contains(text, `MCP server "slow" is still starting`) || !strings.Contains(text, "Retry") {
		t.Errorf("a call to the starting server's tool: %q isError=%v err=%v; want a tool error naming slow, starting, retry", text, isErr, err)
	}
	eventually(t, 20*time.Second, "broken to be reported down", func() bool {
		text, isErr, err = gapsCall(t, c, "broken__echo")
		return err == nil && strings.Contains(text, `MCP server "broken" is down`)
	})
	if !isErr || !strings.Contains(text, "retry") || strings.Contains(text, "hunter2") || strings.Contains(text, "nonexistent") {
		t.Errorf("a call to the broken server's tool: %q isError=%v; want a tool error that says retry and quotes no command", text, isErr)
	}

	// 2026-07-28, no session: the Mcp-Name header names the tool called.
	h, body := coreModern("", "tools/call", "broken__echo", map[string]any{"name": "broken__echo", "arguments": map[string]any{"message": "hi"}}, false)
	if r := corePost(t, s.url, h, body); r.status != 200 || !r.isError() || !strings.Contains(r.text(), `MCP server "broken" is down`) {
		t.Errorf("2026-07-28 call to broken's tool: %d %s", r.status, r.body)
	}
	// A header that disagrees with the body is still refused before anything.
	h["Mcp-Name"] = "broken__other"
	if r := corePost(t, s.url, h, body); r.status != http.StatusBadRequest {
		t.Errorf("2026-07-28 call whose Mcp-Name disagrees: %d %s, want 400", r.status, r.body)
	}

	// Names no live upstream lists are refused, never forwarded.
	eventually(t, 20*time.Second, "t's tools to be routed", func() bool {
		text, _, err = gapsCall(t, c, "t__echo")
		return err == nil && strings.Contains(text, "hi")
	})
	for _, name := range []string{"t__no_such_tool", "nosuch__echo", "toolwarden-unstarted-server", "slow"} {
		text, isErr, err = gapsCall(t, c, name)
		if err == nil && !isErr {
			t.Errorf("%s was answered as a tool: %q", name, text)
		}
	}
	// Once slow is up, its tools are called as usual.
	eventually(t, 40*time.Second, "slow to start and be called", func() bool {
		text, isErr, err = gapsCall(t, c, "slow__echo")
		return err == nil && !isErr && strings.Contains(text, "hi")
	})
}
