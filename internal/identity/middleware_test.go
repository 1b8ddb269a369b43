package identity_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
)

const metadataURL = "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"

// gateway serves next behind the middleware over real HTTP, with the
// metadata endpoint on the same mux, as serve mounts them.
func gateway(t *testing.T, a identity.Authenticator) (*httptest.Server, *int) {
	t.Helper()
	var reached int
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		reached++
		p, ok := identity.FromContext(r.Context())
		if !ok {
			t.Error("no principal in the context")
		}
		_ = json.NewEncoder(w).Encode(p)
	})
	for _, p := range identity.MetadataPaths(audience) {
		mux.Handle(p, identity.MetadataHandler(audience, []string{"https://idp.example"}))
	}
	srv := httptest.NewServer(identity.Middleware(a, metadataURL)(mux))
	t.Cleanup(srv.Close)
	return srv, &reached
}

func call(t *testing.T, srv *httptest.Server, path string, header http.Header) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func tokensFor(t *testing.T) identity.Authenticator {
	path := identitytest.WriteTokens(t, t.TempDir(), map[string]identity.Principal{"tok-alice": {Name: "alice", Groups: []string{"dev"}}})
	tokens, err := identity.LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	return tokens
}

// Every refusal must stop the request before the handler, carry the
// challenge the MCP authorization spec names, and never echo the token.
func TestRequestsWithoutAnAcceptedTokenAreChallengedAndNeverReachTheServer(t *testing.T) {
	t.Parallel()
	srv, reached := gateway(t, tokensFor(t))
	challenge := `Bearer resource_metadata="` + metadataURL + `"`
	cases := []struct {
		name, path string
		header     http.Header
		status     int
		wwwAuth    string
	}{
		{"no token", "/mcp", nil, 401, challenge},
		{"another scheme", "/mcp", http.Header{"Authorization": {"Basic YWxpY2U6cHc="}}, 401, challenge},
		{"an unknown token", "/mcp", http.Header{"Authorization": {"Bearer tok-mallory"}}, 401, challenge + `, error="invalid_token", error_description="the token is not one this server issued, or it was revoked"`},
		{"Bearer with no token", "/mcp", http.Header{"Authorization": {"Bearer "}}, 400, challenge + `, error="invalid_request"`},
		{"a malformed token", "/mcp", http.Header{"Authorization": {"Bearer tok alice\"x"}}, 401, challenge + `, error="invalid_token", error_description="the token has characters a bearer token cannot have"`},
		{"two Authorization headers", "/mcp", http.Header{"Authorization": {"Bearer tok-alice", "Bearer tok-mallory"}}, 400, challenge + `, error="invalid_request"`},
		{"the right token in the query string", "/mcp?access_token=tok-alice", nil, 400, challenge + `, error="invalid_request"`},
		{"a token in the query string beside a good header", "/mcp?access_token=tok-alice", http.Header{"Authorization": {"Bearer tok-alice"}}, 400, challenge + `, error="invalid_request"`},
		{"an oversized token", "/mcp", http.Header{"Authorization": {"Bearer " + strings.Repeat("A", identity.MaxTokenBytes+1)}}, 401, challenge + `, error="invalid_token", error_description="the token is longer than 16384 bytes"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := call(t, srv, c.path, c.header)
			if resp.StatusCode != c.status {
				t.Errorf("status %d, want %d", resp.StatusCode, c.status)
			}
			got := resp.Header.Get("WWW-Authenticate")
			if !strings.HasPrefix(got, c.wwwAuth) {
				t.Errorf("WWW-Authenticate = %q, want it to start %q", got, c.wwwAuth)
			}
			for _, secret := range []string{"tok-alice", "tok-mallory", "YWxpY2U6cHc"} {
				if strings.Contains(body+got, secret) {
					t.Errorf("the response echoes %q: %q %q", secret, got, body)
				}
			}
		})
	}
	if *reached != 0 {
		t.Errorf("%d refused requests reached the handler", *reached)
	}
}

func TestAnAcceptedTokenPutsItsPrincipalInTheRequestContext(t *testing.T) {
	t.Parallel()
	srv, _ := gateway(t, tokensFor(t))
	resp, body := call(t, srv, "/mcp", http.Header{"Authorization": {"bearer tok-alice"}})
	var p identity.Principal
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &p) != nil || p.Name != "alice" || !p.InGroup("dev") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

func TestWithoutAnAuthenticatorEveryRequestIsTheLocalPrincipal(t *testing.T) {
	t.Parallel()
	srv, _ := gateway(t, nil)
	resp, body := call(t, srv, "/mcp", nil)
	var p identity.Principal
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &p) != nil || p.Name != "local" || p.Via != "loopback" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

func TestProtectedResourceMetadataIsServedWithoutAToken(t *testing.T) {
	t.Parallel()
	srv, _ := gateway(t, tokensFor(t))
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			BearerMethods        []string `json:"bearer_methods_supported"`
		}
		err = json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		if doc.Resource != audience || strings.Join(doc.AuthorizationServers, ",") != "https://idp.example" || strings.Join(doc.BearerMethods, ",") != "header" {
			t.Errorf("%s: %+v", path, doc)
		}
	}
}

// The metadata prefix lets requests through unauthenticated; a path that
// only starts like it must not reach a handler that does not clean paths.
func TestAPathThatClimbsOutOfTheMetadataPrefixIsAuthenticated(t *testing.T) {
	t.Parallel()
	var reached int
	srv := httptest.NewServer(identity.Middleware(tokensFor(t), metadataURL)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ })))
	t.Cleanup(srv.Close)
	for _, p := range []string{"/.well-known/oauth-protected-resource/../../mcp", "/.well-known/oauth-protected-resource/%2e%2e/mcp", "/.well-known/oauth-protected-resourcex"} {
		resp, _ := call(t, srv, p, nil)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", p, resp.StatusCode)
		}
	}
	if reached != 0 {
		t.Errorf("%d unauthenticated requests reached the handler", reached)
	}
	if resp, _ := call(t, srv, "/.well-known/oauth-protected-resource/mcp", nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the metadata path itself: status %d", resp.StatusCode)
	}
}

func TestTheMetadataURLPutsTheResourcePathAfterTheWellKnownPrefix(t *testing.T) {
	t.Parallel()
	for resource, want := range map[string]string{
		"https://gw.example/mcp":        "https://gw.example/.well-known/oauth-protected-resource/mcp",
		"https://gw.example":            "https://gw.example/.well-known/oauth-protected-resource",
		"http://127.0.0.1:9/team/a/mcp": "http://127.0.0.1:9/.well-known/oauth-protected-resource/team/a/mcp",
	} {
		if got := identity.MetadataURL(resource); got != want {
			t.Errorf("MetadataURL(%q) = %q, want %q", resource, got, want)
		}
	}
}
