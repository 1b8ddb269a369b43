package config

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestAConfigWithoutServeGetsServesDefaults(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]*Config{"embedded default": Default(), "empty file": mustLoad(t, "")} {
		s := cfg.Serve
		if s.MaxRequestKiB != 1024 || s.MaxResultKiB != 32768 || s.IdleSessionTTL != time.Hour ||
			s.RateLimit.CallsPerSecond != 20 || s.RateLimit.Burst != 40 || s.Listen != "" || s.Auth.Configured() || s.Pos != (Position{}) {
			t.Errorf("%s: Serve = %+v", name, s)
		}
	}
}

func mustLoad(t *testing.T, text string) *Config {
	t.Helper()
	cfg, err := LoadBytes("/etc/tw/c.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestEveryServeKeyIsRead(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, `
[serve]
listen = "0.0.0.0:8443"
session_secret_file = "secret.bin"
max_request_kib = 64
max_result_kib = 2048
idle_session_ttl = "15m"

[serve.rate_limit]
calls_per_second = 2.5
burst = 5

[serve.auth]
tokens_file = "/srv/tw/tokens.json"

[serve.auth.oidc]
issuer = "https://idp.example.com"
audience = "https://mcp.example.com/mcp"
jwks_url = "https://idp.example.com/keys"
principal_claim = "email"
groups_claim = "roles"
`)
	s := cfg.Serve
	want := Serve{
		Listen:            "0.0.0.0:8443",
		SessionSecretFile: filepath.Join("/etc/tw", "secret.bin"),
		MaxRequestKiB:     64,
		MaxResultKiB:      2048,
		IdleSessionTTL:    15 * time.Minute,
		RateLimit:         ServeRateLimit{CallsPerSecond: 2.5, Burst: 5},
	}
	got := s
	got.Auth, got.Pos = ServeAuth{}, Position{}
	if got != want {
		t.Errorf("Serve = %+v\nwant    %+v", got, want)
	}
	if s.Pos.Line != 2 || s.Auth.TokensFile != "/srv/tw/tokens.json" {
		t.Errorf("Pos %v, tokens_file %q", s.Pos, s.Auth.TokensFile)
	}
	o := s.Auth.OIDC
	if o == nil || o.Issuer != "https://idp.example.com" || o.Audience != "https://mcp.example.com/mcp" || o.JWKSURL != "https://idp.example.com/keys" || o.PrincipalClaim != "email" || o.GroupsClaim != "roles" {
		t.Errorf("oidc = %+v", o)
	}
}

func TestAnOIDCTableWithoutClaimsNamesTheCallerBySubAndGroupsByGroups(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, "[serve.auth.oidc]\nissuer = \"http://127.0.0.1:9000\"\naudience = \"http://127.0.0.1:8080/mcp\"\n")
	o := cfg.Serve.Auth.OIDC
	if o == nil || o.PrincipalClaim != "sub" || o.GroupsClaim != "groups" || !cfg.Serve.Auth.Configured() {
		t.Fatalf("oidc = %+v", o)
	}
	if cfg.Serve.MaxRequestKiB != DefaultServeMaxRequestKiB || cfg.Serve.RateLimit.Burst != DefaultServeBurst {
		t.Errorf("defaults lost beside [serve.auth.oidc]: %+v", cfg.Serve)
	}
}

func TestATokensFileIsFoundBesideTheConfigThatNamesIt(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, "[serve.auth]\ntokens_file = \"tokens.json\"\n")
	if got := cfg.Serve.Auth.TokensFile; got != filepath.Join("/etc/tw", "tokens.json") {
		t.Errorf("tokens_file = %q", got)
	}
}

// A [serve] value serve could not honour is an error at its key
// (file:line:col) that says what to write instead.
func TestABadServeValueIsAnErrorAtItsKeyThatSaysWhatToWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, want string }{
		{"[serve]\nlisten = \"8080\"", `c.toml:2:1: serve.listen: "8080" is not a listen address: write host:port`},
		{"[serve]\nlisten = \"127.0.0.1:99999\"", "serve.listen"},
		{"[serve]\nlisten = 8080", "serve.listen: expected a string"},
		{"[serve]\nmax_request_kib = 0", "serve.max_request_kib: expected an integer from 1 to 1048576"},
		{"[serve]\nmax_request_kib = 1.5", "expected a positive integer"},
		{"[serve]\nmax_result_kib = -3", "serve.max_result_kib"},
		{"[serve]\nidle_session_ttl = 60", `serve.idle_session_ttl: expected a duration such as "30m"`},
		{"[serve]\nidle_session_ttl = \"90 minutes\"", "from 10s to 24h"},
		{"[serve]\nidle_session_ttl = \"48h\"", "from 10s to 24h"},
		{"[serve]\nsession_secret_file = \"\"", "serve.session_secret_file: empty path"},
		{"[serve]\nsession_secret = \"hunter2\"", `serve: unknown key "session_secret" (did you mean "session_secret_file"?)`},
		{"[serve]\nmax_requests_kib = 10", `(did you mean "max_request_kib"?)`},
		{"[serve.rate_limit]\ncalls_per_second = 0", "serve.rate_limit.calls_per_second: expected a number of calls per second above 0"},
		{"[serve.rate_limit]\nburst = 0", "serve.rate_limit.burst"},
		{"[serve.rate_limit]\nbrust = 3", `(did you mean "burst"?)`},
		{"[serve.auth]\ntoken_file = \"t.json\"", `c.toml:2:1: serve.auth: unknown key "token_file" (did you mean "tokens_file"?)`},
		{"[serve.auth]\ntokens = \"t.json\"", `unknown key "tokens"`},
		{"[serve.auth.oidc]\naudience = \"x\"", `serve.auth.oidc: missing required key "issuer"`},
		{"[serve.auth.oidc]\nissuer = \"https://idp\"", `serve.auth.oidc: missing required key "audience"`},
		{"[serve.auth.oidc]\nissuer = \"http://idp.example.com\"\naudience = \"a\"", "uses plain http"},
		{"[serve.auth.oidc]\nissuer = \"idp.example.com\"\naudience = \"a\"", "is not an absolute https:// URL"},
		{"[serve.auth.oidc]\nissuer = \"https://u:p@idp.example.com\"\naudience = \"a\"", "has credentials in it"},
		{"[serve.auth.oidc]\nissuer = \"https://idp\"\naudience = \"\"", "serve.auth.oidc.audience: empty"},
		{"[serve.auth.oidc]\nissuer = \"https://idp\"\naudience = \"a\"\njwks_url = \"http://10.0.0.1/keys\"", "serve.auth.oidc.jwks_url"},
		{"[serve.auth.oidc]\nissuer = \"https://idp\"\naudience = \"a\"\nprincipal_claim = \"\"", "serve.auth.oidc.principal_claim: empty"},
		{"[serve.auth.oidc]\nissuer = \"https://idp\"\naudience = \"a\"\nclient_id = \"x\"", `unknown key "client_id"`},
		{"[serve.auth.oidc]\nissuer = \"https://idp\"\naudience = \"a\"\naudiance = \"x\"", `(did you mean "audience"?)`},
		{"serve = true", "serve: expected a table"},
		{"[serve]\npublic_url = \"mcp.example.com/mcp\"", `c.toml:2:1: serve.public_url: "mcp.example.com/mcp" is not an absolute URL: write the URL clients use, e.g. public_url = "https://mcp.example.com/mcp"`},
		{"[serve]\npublic_url = \"ftp://mcp.example.com/mcp\"", "serve.public_url: \"ftp://mcp.example.com/mcp\" is not an absolute URL"},
		{"[serve]\npublic_url = \"http://mcp.example.com/mcp\"", "serve.public_url: \"http://mcp.example.com/mcp\" uses plain http: clients would send their tokens in clear; write https://mcp.example.com/mcp"},
		{"[serve]\npublic_url = \"https://u:p@mcp.example.com/mcp\"", "has credentials in it"},
		{"[serve]\npublic_url = \"https://mcp.example.com/mcp?team=a\"", "has a query or fragment"},
		{"[serve]\npublic_url = \"https://mcp.example.com/mcp#x\"", "has a query or fragment"},
		{"[serve]\npublic_url = 443", "serve.public_url: expected a string"},
		{"[serve]\npublic_uri = \"https://mcp.example.com\"", `(did you mean "public_url"?)`},
	} {
		_, err := LoadBytes("c.toml", []byte(tc.text+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v\nwant an error containing %q", tc.text, err, tc.want)
		}
	}
}

func TestAMisspelledServeTableIsNoticed(t *testing.T) {
	t.Parallel()
	cfg := mustLoad(t, "[serv]\nlisten = \"127.0.0.1:8080\"\n")
	var found bool
	for _, w := range cfg.Warnings {
		found = found || strings.Contains(w.Message, `"serv"`) && strings.Contains(w.Message, "did you mean serve")
	}
	if !found {
		t.Errorf("no warning for [serv]: %v", cfg.Warnings)
	}
}

func TestLaterLayersAmendServeKeyByKey(t *testing.T) {
	t.Parallel()
	cfg, err := LoadLayers(
		Layer{Name: "/etc/tw/team.toml", Data: []byte("[serve]\nmax_request_kib = 64\n[serve.auth]\ntokens_file = \"tokens.json\"\n")},
		Layer{Name: "/home/a/.tw/c.toml", Data: []byte("[serve]\nlisten = \"127.0.0.1:9\"\n")},
	)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Serve
	if s.MaxRequestKiB != 64 || s.Listen != "127.0.0.1:9" || s.Auth.TokensFile != "/etc/tw/tokens.json" {
		t.Errorf("Serve = %+v", s)
	}
}

// public_url names the /mcp URL clients use: kept as written when it ends
// in /mcp, a base otherwise (/mcp appended); plain http only on loopback.
func TestPublicURLIsTheMCPURLClientsUseWithMCPAppendedToABase(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://mcp.example.com/mcp":         "https://mcp.example.com/mcp",
		"https://mcp.example.com":             "https://mcp.example.com/mcp",
		"https://mcp.example.com/":            "https://mcp.example.com/mcp",
		"https://lb.example.com:8443/team-a/": "https://lb.example.com:8443/team-a/mcp",
		"https://lb.example.com/team-a/mcp/":  "https://lb.example.com/team-a/mcp",
		"http://127.0.0.1:9000":               "http://127.0.0.1:9000/mcp",
		"http://localhost/mcp":                "http://localhost/mcp",
	} {
		cfg := mustLoad(t, "[serve]\npublic_url = "+strconv.Quote(in)+"\n")
		if got := cfg.Serve.PublicURL; got != want {
			t.Errorf("public_url = %q: got %q, want %q", in, got, want)
		}
	}
	if got := mustLoad(t, "[serve]\nlisten = \"127.0.0.1:1\"\n").Serve.PublicURL; got != "" {
		t.Errorf("without public_url: %q, want empty", got)
	}
}
