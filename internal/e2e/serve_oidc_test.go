package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
)

// serveOIDCAudience is the gateway's URL as the issuer's tokens name it.
const serveOIDCAudience = "https://gateway.test/mcp"

// A team that runs serve as an OAuth resource server in front of its
// issuer: through the real binary, a token the issuer signed for this
// gateway names the caller and its groups (policy lists and decides by
// them, in both eras), and every token an attacker can make is refused
// with a challenge before anything is listed or called.
func TestServeTakesItsCallersFromAnOIDCIssuerAndRefusesEveryForgery(t *testing.T) {
	t.Parallel()
	iss := identitytest.NewIssuer(t)
	other := identitytest.NewIssuer(t)
	dir := coreFSDir(t)
	cfg := writeFile(t, "oidc.toml", fmt.Sprintf(`
[mcp_servers.fs]
command = %q
args = [%q]

[apps.fs.tools.create_directory]
groups = ["ops"]

[serve.auth.oidc]
issuer = %q
audience = %q

[serve.rate_limit]
calls_per_second = 1000
burst = 2000
`, npmServer(t, "mcp-server-filesystem"), dir, iss.URL, serveOIDCAudience))
	srv := coreStartServe(t, nil, "--config", cfg)
	serveReady(t, srv.url)

	mint := func(sub string, groups ...string) string {
		return iss.Mint(map[string]any{"sub": sub, "aud": serveOIDCAudience, "groups": groups})
	}
	for _, era := range coreEras {
		t.Run(era.name, func(t *testing.T) {
			ops := coreClient(t, srv.url, era.version, nil, map[string]string{"Authorization": "Bearer " + mint("olga", "ops")})
			dev := coreClient(t, srv.url, era.version, nil, map[string]string{"Authorization": "Bearer " + mint("dana", "dev")})
			eventually(t, 30*time.Second, "fs tools", func() bool { return contains(ops.toolNames(t), "fs__read_text_file") })
			if names := ops.toolNames(t); !contains(names, "fs__create_directory") {
				t.Fatalf("olga (ops, from the issuer's groups claim) is not listed create_directory: %v", names)
			}
			if names := dev.toolNames(t); contains(names, "fs__create_directory") {
				t.Fatalf("dana (dev) is listed a tool of ops: %v", names)
			}
			made := filepath.Join(dir, "by-dana-"+era.version)
			if out, isErr := dev.call(t, "fs__create_directory", map[string]any{"path": made}); !isErr || fileExists(made) {
				t.Fatalf("dana called a tool of ops: %q (error %v)", out, isErr)
			}
			out, isErr := ops.call(t, "fs__read_text_file", map[string]any{"path": filepath.Join(dir, "notes.txt")})
			if isErr || !strings.Contains(out, "hello from the filesystem") {
				t.Fatalf("olga's read: %q (error %v)", out, isErr)
			}
		})
	}
	checks := 0
	for _, rec := range serveAuditLog(t, srv) {
		if rec.Event != "check" {
			continue
		}
		checks++
		if !strings.HasPrefix(rec.Session, "olga/") && !strings.HasPrefix(rec.Session, "dana/") {
			t.Fatalf("a decision not keyed by an issuer's principal: session %q, %+v", rec.Session, rec.Decision)
		}
	}
	if checks == 0 {
		t.Fatal("no decision in the audit log")
	}

	now := time.Now()
	forged := map[string]string{
		"no token":                      "",
		"another audience":              iss.Mint(map[string]any{"sub": "mallory", "aud": "https://other.test/mcp", "groups": []string{"ops"}}),
		"expired":                       iss.Mint(map[string]any{"sub": "mallory", "aud": serveOIDCAudience, "exp": now.Add(-time.Minute).Unix()}),
		"another issuer":                other.Mint(map[string]any{"sub": "mallory", "aud": serveOIDCAudience}),
		"alg none":                      iss.MintWith(map[string]any{"sub": "mallory", "aud": serveOIDCAudience}, identitytest.Sign{Alg: "none"}),
		"the issuer's kid, another key": iss.MintWith(map[string]any{"sub": "mallory", "aud": serveOIDCAudience}, identitytest.Sign{Key: other.Keys()[0], KID: iss.Keys()[0].ID}),
	}
	for name, token := range forged {
		t.Run(name, func(t *testing.T) {
			h, body := coreModern(token, "tools/list", "", map[string]any{}, false)
			r := corePost(t, srv.url, h, body)
			challenge := r.header.Get("WWW-Authenticate")
			if r.status != http.StatusUnauthorized || !strings.Contains(challenge, `resource_metadata="`) || strings.Contains(r.body, "fs__") {
				t.Fatalf("%s: status %d, challenge %q, body %q", name, r.status, challenge, r.body)
			}
			if token != "" && (!strings.Contains(challenge, `error="invalid_token"`) || strings.Contains(r.body+challenge, token)) {
				t.Fatalf("%s: the challenge must say invalid_token and never echo the token: %q %q", name, challenge, r.body)
			}
		})
	}

	// The challenge names the protected-resource metadata, which names the
	// issuer a client must get its token from.
	h, body := coreModern("", "tools/list", "", map[string]any{}, false)
	challenge := corePost(t, srv.url, h, body).header.Get("WWW-Authenticate")
	_, rest, _ := strings.Cut(challenge, `resource_metadata="`)
	metaURL, _, _ := strings.Cut(rest, `"`)
	if u, err := url.Parse(metaURL); err != nil || u.Path == "" {
		t.Fatalf("challenge %q names no metadata URL", challenge)
	}
	resp, err := http.Get(strings.Replace(metaURL, "https://gateway.test", strings.TrimSuffix(srv.url, "/mcp"), 1))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil || resp.StatusCode != 200 || meta.Resource != serveOIDCAudience || !contains(meta.AuthorizationServers, iss.URL) {
		t.Fatalf("metadata at %s: %d %s", metaURL, resp.StatusCode, raw)
	}
}
