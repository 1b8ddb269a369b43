package identity

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
)

// OIDCConfig is [serve.auth.oidc]: whose access tokens serve accepts.
type OIDCConfig struct {
	// Issuer is the authorization server's issuer URL; tokens must carry
	// it as "iss", and its discovery document names the key set.
	Issuer string
	// Audience is this server's resource identifier (RFC 8707); tokens
	// must list it in "aud".
	Audience string
	// JWKSURL, when set, is the key set, and discovery is skipped.
	JWKSURL string
	// PrincipalClaim names the claim that is the principal ("sub").
	PrincipalClaim string
	// GroupsClaim names the claim that lists the groups ("groups").
	GroupsClaim string
	// HTTPClient fetches discovery and keys (nil: a client with a 10 s
	// timeout).
	HTTPClient *http.Client
}

// allowedAlgs are the signature algorithms a token may use: public-key
// ones only. "none" and the HMAC family are absent, so a token signed with
// nothing, or with the issuer's public key as an HMAC secret, never
// verifies.
var allowedAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// OIDC authenticates JWT access tokens from one issuer, as an OAuth 2.1
// resource server does under the MCP authorization spec: signature by a
// key of the issuer's JWKS, then iss, aud, exp and nbf (go-oidc allows 5
// minutes of clock skew on nbf, none on exp).
type OIDC struct {
	cfg      OIDCConfig
	keys     *keySet
	verifier *oidc.IDTokenVerifier
	verified verifiedCache
}

// NewOIDC discovers the issuer's key set (unless cfg.JWKSURL names it) and
// fetches it once, so a wrong issuer fails at start rather than at the
// first call. Its errors name the key at fault (issuer, jwks_url); the
// caller adds the table, [serve.auth.oidc].
func NewOIDC(ctx context.Context, cfg OIDCConfig) (*OIDC, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("both issuer and audience must be set")
	}
	if cfg.PrincipalClaim == "" {
		cfg.PrincipalClaim = "sub"
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "groups"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	jwksURL := cfg.JWKSURL
	if jwksURL == "" {
		var err error
		if jwksURL, err = discover(ctx, cfg); err != nil {
			return nil, err
		}
	}
	keys := newKeySet(jwksURL, cfg.HTTPClient)
	if err := keys.load(ctx); err != nil {
		return nil, err
	}
	algs := make([]string, len(allowedAlgs))
	for i, a := range allowedAlgs {
		algs[i] = string(a)
	}
	v := oidc.NewVerifier(cfg.Issuer, keys, &oidc.Config{ClientID: cfg.Audience, SupportedSigningAlgs: algs})
	return &OIDC{cfg: cfg, keys: keys, verifier: v}, nil
}

// discover reads the issuer's OpenID Connect discovery document; go-oidc
// checks that it names the same issuer.
func discover(ctx context.Context, cfg OIDCConfig) (string, error) {
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, cfg.HTTPClient), cfg.Issuer)
	if err != nil {
		return "", fmt.Errorf("issuer %s: discovery at %s/.well-known/openid-configuration failed: %w (check the issuer, or set jwks_url to the issuer's key set)", cfg.Issuer, strings.TrimSuffix(cfg.Issuer, "/"), err)
	}
	var doc struct {
		JWKSURL string `json:"jwks_uri"`
	}
	if err := p.Claims(&doc); err != nil || doc.JWKSURL == "" {
		return "", fmt.Errorf("issuer %s: the discovery document names no jwks_uri; set jwks_url", cfg.Issuer)
	}
	if u, err := url.Parse(doc.JWKSURL); err != nil || u.Scheme != "https" && !(u.Scheme == "http" && IsLoopback(u.Host)) {
		// Keys fetched over plain http can be swapped on the way, and
		// whoever swaps them signs any token.
		return "", fmt.Errorf("issuer %s: the discovery document's jwks_uri %s is not https; fix the issuer, or set jwks_url to an https URL", cfg.Issuer, doc.JWKSURL)
	}
	return doc.JWKSURL, nil
}

// Issuer is the issuer o trusts (for protected-resource metadata).
func (o *OIDC) Issuer() string { return o.cfg.Issuer }

// Authenticate accepts a JWT access token from the issuer, for the
// audience, valid now, and names its principal and groups from the
// configured claims.
func (o *OIDC) Authenticate(r *http.Request) (Principal, error) {
	token, err := BearerToken(r)
	if err != nil {
		return Principal{}, err
	}
	if strings.Count(token, ".") != 2 {
		return Principal{}, unrecognized{invalidToken("the token is not a JWT")}
	}
	key, now := sha256.Sum256([]byte(token)), time.Now()
	if p, ok := o.verified.get(key, now); ok {
		return p, nil
	}
	seen := &verifiedKey{}
	ctx := context.WithValue(r.Context(), verifiedKeyCtx{}, seen)
	idt, err := o.verifier.Verify(ctx, token)
	if err != nil {
		return Principal{}, o.explain(token, seen.payload, err)
	}
	var claims map[string]json.RawMessage
	if err := idt.Claims(&claims); err != nil {
		return Principal{}, invalidToken("the token's claims are not a JSON object")
	}
	p, err := o.principal(claims)
	if err != nil {
		return Principal{}, err
	}
	o.verified.put(key, p, idt.Expiry, now)
	return p, nil
}

// explain turns a verification failure into a refusal that says which
// check failed, without quoting the token. payload is set when the
// signature verified: the claims are then the issuer's and may be read.
func (o *OIDC) explain(token string, payload []byte, err error) *AuthError {
	var expired *oidc.TokenExpiredError
	if errors.As(err, &expired) {
		return invalidToken("the token has expired")
	}
	if payload == nil {
		if alg := headerAlg(token); alg != "" && !slices.Contains(allowedAlgs, jose.SignatureAlgorithm(alg)) {
			return invalidToken("the token's signing algorithm is not accepted (public-key signatures only)")
		}
		return invalidToken("the token's signature does not verify with the issuer's keys")
	}
	var c struct {
		Issuer    string          `json:"iss"`
		Subject   string          `json:"sub"`
		Audience  json.RawMessage `json:"aud"`
		Expiry    float64         `json:"exp"`
		NotBefore float64         `json:"nbf"`
	}
	switch {
	case json.Unmarshal(payload, &c) != nil:
		// go-oidc failed to read a standard claim too (a subject that is
		// not a string, a date that is not a number).
		return invalidToken("the token's registered claims (iss, sub, aud, exp, nbf) do not have their standard types")
	case c.Issuer != o.cfg.Issuer:
		return invalidToken("the token is from another issuer")
	case !audienceHas(c.Audience, o.cfg.Audience):
		return invalidToken("the token is for another audience (resource)")
	case c.NotBefore > float64(time.Now().Unix()):
		return invalidToken("the token is not valid yet (nbf)")
	}
	return invalidToken("the token was not accepted")
}

// headerAlg reads the alg of a compact JWS's header, "" when unreadable.
func headerAlg(token string) string {
	head, _, _ := strings.Cut(token, ".")
	var h struct {
		Alg string `json:"alg"`
	}
	if data, err := base64.RawURLEncoding.DecodeString(head); err == nil {
		_ = json.Unmarshal(data, &h)
	}
	return h.Alg
}

func audienceHas(raw json.RawMessage, aud string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == aud
	}
	var many []string
	return json.Unmarshal(raw, &many) == nil && slices.Contains(many, aud)
}

// principal reads the principal and groups claims. A principal claim that
// is not a non-empty string, or a groups claim that is not an array of
// strings, refuses the token: guessing would hand out groups the issuer
// did not state.
func (o *OIDC) principal(claims map[string]json.RawMessage) (Principal, error) {
	var name string
	if err := json.Unmarshal(claims[o.cfg.PrincipalClaim], &name); err != nil || checkName(name) != nil {
		return Principal{}, invalidToken("the token's " + o.cfg.PrincipalClaim + " claim is not a usable principal name")
	}
	var groups []string
	if raw, ok := claims[o.cfg.GroupsClaim]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &groups); err != nil {
			return Principal{}, invalidToken("the token's " + o.cfg.GroupsClaim + " claim is not an array of strings")
		}
	}
	return Principal{Name: name, Groups: groups, Via: "oidc"}, nil
}
