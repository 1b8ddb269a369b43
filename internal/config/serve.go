package config

import (
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// This file holds the [serve] table: how `toolwarden serve` listens, how
// large a request and a result may be, how fast each principal may call,
// and who may call at all ([serve.auth]). Every other command ignores it.
// Codex has no such table; it is toolwarden's own.

// Serve is the [serve] table with its defaults filled in (DefaultServe):
// Load always sets Config.Serve, whether the table is there or not.
type Serve struct {
	// Listen is the address to listen on ("127.0.0.1:8080"); "" leaves it
	// to the --listen flag.
	Listen string
	// PublicURL is the /mcp URL clients use when it differs from the bound
	// address (a load balancer or TLS terminator in front): the resource
	// the protected-resource metadata and a 401's challenge name. "" names
	// OIDC's audience, else the bound address.
	PublicURL string
	// SessionSecretFile is an absolute path to the secret that seals
	// session ids, the same file on every replica; "" draws one per process.
	SessionSecretFile string
	// MaxRequestKiB bounds one HTTP request body.
	MaxRequestKiB int
	// MaxResultKiB bounds one upstream answer (a tool result among them).
	MaxResultKiB int
	// IdleSessionTTL ends a session idle this long.
	IdleSessionTTL time.Duration
	RateLimit      ServeRateLimit
	Auth           ServeAuth
	// Pos is where [serve] is; zero when the config has no such table.
	Pos Position
}

// ServeRateLimit is [serve.rate_limit], applied to each principal apart.
type ServeRateLimit struct {
	CallsPerSecond float64
	Burst          int
}

// ServeAuth is [serve.auth]: who may call. With neither a tokens file nor
// an issuer, serve runs only on loopback, every caller being "local".
type ServeAuth struct {
	// TokensFile is the absolute path of the hashed tokens file.
	TokensFile string
	// OIDC is [serve.auth.oidc], nil when absent.
	OIDC *ServeOIDC
}

// ServeOIDC is [serve.auth.oidc]: the issuer whose JWT access tokens serve
// accepts, as an OAuth resource server.
type ServeOIDC struct {
	Issuer   string
	Audience string
	// JWKSURL, when set, names the key set and skips discovery.
	JWKSURL        string
	PrincipalClaim string
	GroupsClaim    string
	Pos            Position
}

// Configured reports whether any authentication is set.
func (a ServeAuth) Configured() bool { return a.TokensFile != "" || a.OIDC != nil }

// The defaults of [serve]. MaxResultKiB is the proxy's bound on one
// upstream message (32 MiB), so serve and proxy pass the same results.
const (
	DefaultServeMaxRequestKiB  = 1024
	DefaultServeMaxResultKiB   = 32 << 10
	DefaultServeIdleSessionTTL = time.Hour
	DefaultServeCallsPerSecond = 20
	DefaultServeBurst          = 40
	// maxServeIdleTTL matches the age after which serve refuses a sealed
	// session id whatever its activity: a longer idle time means nothing.
	maxServeIdleTTL = 24 * time.Hour
	minServeIdleTTL = 10 * time.Second
)

// DefaultServe is [serve] when the config says nothing.
func DefaultServe() Serve {
	return Serve{
		MaxRequestKiB:  DefaultServeMaxRequestKiB,
		MaxResultKiB:   DefaultServeMaxResultKiB,
		IdleSessionTTL: DefaultServeIdleSessionTTL,
		RateLimit:      ServeRateLimit{CallsPerSecond: DefaultServeCallsPerSecond, Burst: DefaultServeBurst},
	}
}

// serve reads [serve] over the defaults.
func (l *loader) serve(p string, v any) Serve {
	s := DefaultServe()
	s.Pos, _ = l.firstPos(p)
	l.table(p, v, fields{
		"listen":              func(p string, v any) { s.Listen = l.listenAddr(p, v) },
		"public_url":          func(p string, v any) { s.PublicURL = l.publicURL(p, v) },
		"session_secret_file": func(p string, v any) { s.SessionSecretFile = l.filePath(p, v, "the file holding the session secret") },
		"max_request_kib":     func(p string, v any) { s.MaxRequestKiB = l.positiveInt(p, v, 1<<20, "KiB one request body may take") },
		"max_result_kib":      func(p string, v any) { s.MaxResultKiB = l.positiveInt(p, v, 1<<22, "KiB one upstream answer may take") },
		"idle_session_ttl":    func(p string, v any) { s.IdleSessionTTL = l.idleTTL(p, v) },
		"rate_limit":          func(p string, v any) { s.RateLimit = l.rateLimit(p, v) },
		"auth":                func(p string, v any) { s.Auth = l.serveAuth(p, v) },
	})
	return s
}

// listenAddr reads host:port as net.Listen takes it.
func (l *loader) listenAddr(p string, v any) string {
	s := l.str(p, v)
	if _, ok := v.(string); !ok {
		return ""
	}
	_, port, err := net.SplitHostPort(s)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		l.errorf(p, `%s is not a listen address: write host:port, e.g. listen = "127.0.0.1:8080" (or ":8080" for every interface, which needs [serve.auth])`, quote(s))
		return ""
	}
	return s
}

// publicURL reads the URL clients reach serve at. Its path is kept when it
// ends in /mcp; otherwise it is a base and /mcp is appended, since serve
// answers MCP at /mcp only (a proxy may still add a prefix before it).
// https is required off loopback: the URL is what clients send tokens to.
func (l *loader) publicURL(p string, v any) string {
	s := l.str(p, v)
	if _, ok := v.(string); !ok {
		return ""
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		l.errorf(p, `%s is not an absolute URL: write the URL clients use, e.g. public_url = "https://mcp.example.com/mcp"`, quote(s))
		return ""
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		l.errorf(p, `%s uses plain http: clients would send their tokens in clear; write https://%s%s (http is accepted for localhost only)`, quote(s), u.Host, u.Path)
		return ""
	case u.User != nil:
		l.errorf(p, "%s has credentials in it, which leak with the file: drop them", quote(u.Redacted()))
		return ""
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		l.errorf(p, `%s has a query or fragment, which a resource URL cannot have: write only scheme, host and path, e.g. "https://mcp.example.com/mcp"`, quote(s))
		return ""
	}
	u.Path = strings.TrimRight(u.Path, "/")
	if !strings.HasSuffix(u.Path, "/mcp") {
		u.Path += "/mcp"
	}
	u.RawPath = ""
	return u.String()
}

// filePath resolves a path against the folder of the layer that wrote it,
// so a config means the same from any working directory.
func (l *loader) filePath(p string, v any, what string) string {
	s := l.str(p, v)
	if _, ok := v.(string); !ok {
		return ""
	}
	if s == "" {
		l.errorf(p, "empty path: name %s, or remove the key", what)
		return ""
	}
	abs, _ := l.layerPath(p, s)
	return abs
}

// idleTTL reads a Go duration string ("30m", "1h").
func (l *loader) idleTTL(p string, v any) time.Duration {
	s, ok := v.(string)
	if !ok {
		l.errorf(p, `expected a duration such as "30m" or "1h", got %s`, describe(v))
		return DefaultServeIdleSessionTTL
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < minServeIdleTTL || d > maxServeIdleTTL {
		l.errorf(p, `expected a duration from 10s to 24h, such as "30m" or "1h", got %s`, quote(s))
		return DefaultServeIdleSessionTTL
	}
	return d
}

// rateLimit reads [serve.rate_limit] over the defaults.
func (l *loader) rateLimit(p string, v any) ServeRateLimit {
	r := ServeRateLimit{CallsPerSecond: DefaultServeCallsPerSecond, Burst: DefaultServeBurst}
	l.table(p, v, fields{
		"calls_per_second": func(p string, v any) {
			f, ok := asNumber(v)
			if !ok || math.IsNaN(f) || f <= 0 || f > 1e6 {
				l.errorf(p, "expected a number of calls per second above 0 and at most 1000000 (each principal's sustained rate), got %s", describe(v))
				return
			}
			r.CallsPerSecond = f
		},
		"burst": func(p string, v any) {
			r.Burst = l.positiveInt(p, v, 1e6, "calls a principal may make at once above the rate")
		},
	})
	return r
}

// serveAuth reads [serve.auth].
func (l *loader) serveAuth(p string, v any) ServeAuth {
	var a ServeAuth
	l.table(p, v, fields{
		"tokens_file": func(p string, v any) { a.TokensFile = l.filePath(p, v, "the JSON file of hashed tokens") },
		"oidc":        func(p string, v any) { a.OIDC = l.serveOIDC(p, v) },
	})
	return a
}

// serveOIDC reads [serve.auth.oidc]; issuer and audience are required.
func (l *loader) serveOIDC(p string, v any) *ServeOIDC {
	o := &ServeOIDC{PrincipalClaim: "sub", GroupsClaim: "groups"}
	o.Pos, _ = l.firstPos(p)
	t, ok := l.table(p, v, fields{
		"issuer": func(p string, v any) { o.Issuer = l.issuerURL(p, v, "issuer") },
		"audience": func(p string, v any) {
			o.Audience = l.nonEmpty(p, v, `the resource tokens must be issued for, usually this gateway's URL, e.g. audience = "https://mcp.example.com/mcp"`)
		},
		"jwks_url": func(p string, v any) { o.JWKSURL = l.issuerURL(p, v, "jwks_url") },
		"principal_claim": func(p string, v any) {
			o.PrincipalClaim = l.nonEmpty(p, v, `the claim that names the caller, e.g. "sub" or "email"`)
		},
		"groups_claim": func(p string, v any) {
			o.GroupsClaim = l.nonEmpty(p, v, `the claim that lists the caller's groups, e.g. "groups"`)
		},
	})
	if !ok {
		return nil
	}
	for _, k := range []string{"issuer", "audience"} {
		if _, has := t[k]; !has {
			l.errorf(p, "missing required key %s: [serve.auth.oidc] needs issuer (who signs the tokens) and audience (the resource they are for)", quote(k))
		}
	}
	return o
}

func (l *loader) nonEmpty(p string, v any, what string) string {
	s := l.str(p, v)
	if _, ok := v.(string); ok && strings.TrimSpace(s) == "" {
		l.errorf(p, "empty: set %s", what)
	}
	return s
}

// issuerURL reads an https URL; plain http only to a loopback host
// (loopbackHost, channel.go), where no one can tamper with the keys on the
// way.
func (l *loader) issuerURL(p string, v any, key string) string {
	s := l.str(p, v)
	if _, ok := v.(string); !ok {
		return ""
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		l.errorf(p, "%s is not an absolute https:// URL: write %s = \"https://...\"", quote(s), key)
		return ""
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		l.errorf(p, "%s uses plain http: keys and tokens fetched over it can be swapped on the way; use https:// (http is accepted for localhost only)", quote(s))
		return ""
	case u.User != nil:
		l.errorf(p, "%s has credentials in it, which leak with the file: drop them", quote(u.Redacted()))
		return ""
	}
	return s
}
