// Package identitytest gives tests real identities for toolwarden serve:
// an OpenID Connect issuer over HTTP on 127.0.0.1 that publishes discovery
// and a JWKS and signs tokens (and forges them, for attacker tests), and
// tokens files written the way an admin writes them. It is not a _test
// package so that the end-to-end suites can use it.
//
//	iss := identitytest.NewIssuer(t)
//	tok := iss.Mint(map[string]any{"sub": "alice", "aud": "http://127.0.0.1:8080/mcp", "groups": []string{"dev"}})
package identitytest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Key is one signing key of an issuer.
type Key struct {
	ID     string
	Alg    string // "RS256" or "ES256"
	Signer crypto.Signer
}

// Issuer is a real OIDC issuer on 127.0.0.1: /.well-known/openid-configuration
// and /jwks.json over HTTP, closed when the test ends.
type Issuer struct {
	// URL is the issuer identifier (no trailing slash), the "iss" Mint
	// writes.
	URL string

	t       testing.TB
	srv     *httptest.Server
	mu      sync.Mutex
	keys    []*Key // published
	current *Key   // signs Mint's tokens
	fetches atomic.Int64
	serial  int
}

// NewIssuer starts an issuer publishing one RSA (RS256) and one EC (ES256)
// key; Mint signs with the RSA key until Rotate.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	iss := &Issuer{t: t}
	iss.current = iss.NewKey("RS256")
	iss.keys = []*Key{iss.current, iss.NewKey("ES256")}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", iss.serveDiscovery)
	mux.HandleFunc("GET /jwks.json", iss.serveJWKS)
	iss.srv = httptest.NewServer(mux)
	t.Cleanup(iss.srv.Close)
	iss.URL = iss.srv.URL
	return iss
}

// JWKSURL is where the key set is published.
func (iss *Issuer) JWKSURL() string { return iss.URL + "/jwks.json" }

// JWKSFetches counts the key set's fetches so far.
func (iss *Issuer) JWKSFetches() int { return int(iss.fetches.Load()) }

// NewKey makes a key (alg "RS256" or "ES256") that is not published: an
// attacker's, or one to Publish later.
func (iss *Issuer) NewKey(alg string) *Key {
	iss.t.Helper()
	iss.mu.Lock()
	iss.serial++
	k := &Key{ID: fmt.Sprintf("%s-%d", alg, iss.serial), Alg: alg}
	iss.mu.Unlock()
	var err error
	switch alg {
	case "RS256":
		k.Signer, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ES256":
		k.Signer, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		err = fmt.Errorf("identitytest: no key for %s (want RS256 or ES256)", alg)
	}
	if err != nil {
		iss.t.Fatal(err)
	}
	return k
}

// Keys are the published keys, the signing one first.
func (iss *Issuer) Keys() []*Key {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	out := []*Key{iss.current}
	for _, k := range iss.keys {
		if k != iss.current {
			out = append(out, k)
		}
	}
	return out
}

// Rotate publishes a new RSA key and signs with it from now on; the old
// keys stay published until Retire.
func (iss *Issuer) Rotate() *Key {
	k := iss.NewKey("RS256")
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.keys = append(iss.keys, k)
	iss.current = k
	return k
}

// Retire stops publishing the key with id kid.
func (iss *Issuer) Retire(kid string) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	kept := iss.keys[:0]
	for _, k := range iss.keys {
		if k.ID != kid {
			kept = append(kept, k)
		}
	}
	iss.keys = kept
}

// Mint signs claims with the current key. It adds "iss" (the issuer),
// "iat" (now) and "exp" (in 10 minutes) when claims lack them; the caller
// sets "sub", "aud" and the rest.
func (iss *Issuer) Mint(claims map[string]any) string {
	iss.mu.Lock()
	k := iss.current
	iss.mu.Unlock()
	return iss.MintWith(claims, Sign{Key: k})
}

// Sign says how MintWith signs: the key (its ID and Alg are the header's
// kid and alg unless KID or Alg override them), or, for alg "none", no
// signature, or for "HS256", an HMAC with Secret.
type Sign struct {
	Key    *Key
	Alg    string
	KID    string
	Secret []byte
	// Bare leaves claims as given: no iss, iat or exp added.
	Bare bool
}

// MintWith signs claims as s says, for tests that forge tokens.
func (iss *Issuer) MintWith(claims map[string]any, s Sign) string {
	iss.t.Helper()
	payload := map[string]any{}
	if !s.Bare {
		now := time.Now()
		payload["iss"], payload["iat"], payload["exp"] = iss.URL, now.Unix(), now.Add(10*time.Minute).Unix()
	}
	for k, v := range claims {
		payload[k] = v
	}
	header := map[string]any{"typ": "JWT"}
	if s.Key != nil {
		header["alg"], header["kid"] = s.Key.Alg, s.Key.ID
	}
	if s.Alg != "" {
		header["alg"] = s.Alg
	}
	if s.KID != "" {
		header["kid"] = s.KID
	}
	input := segment(iss.t, header) + "." + segment(iss.t, payload)
	sig, err := sign(header["alg"], input, s)
	if err != nil {
		iss.t.Fatal(err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func segment(t testing.TB, v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(data)
}

// sign makes the JWS signature of input (RFC 7515/7518): PKCS #1 v1.5 for
// RS256, r||s for ES256, HMAC for HS256, nothing for none.
func sign(alg any, input string, s Sign) ([]byte, error) {
	sum := sha256.Sum256([]byte(input))
	switch alg {
	case "none":
		return nil, nil
	case "HS256":
		m := hmac.New(sha256.New, s.Secret)
		m.Write([]byte(input))
		return m.Sum(nil), nil
	case "RS256":
		rk, ok := s.Key.Signer.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("identitytest: RS256 needs an RSA key")
		}
		return rsa.SignPKCS1v15(rand.Reader, rk, crypto.SHA256, sum[:])
	case "ES256":
		ek, ok := s.Key.Signer.(*ecdsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("identitytest: ES256 needs an EC key")
		}
		r, sv, err := ecdsa.Sign(rand.Reader, ek, sum[:])
		if err != nil {
			return nil, err
		}
		out := make([]byte, 64)
		r.FillBytes(out[:32])
		sv.FillBytes(out[32:])
		return out, nil
	}
	return nil, fmt.Errorf("identitytest: cannot sign with alg %v", alg)
}

func (iss *Issuer) serveDiscovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{
		"issuer":                                iss.URL,
		"jwks_uri":                              iss.JWKSURL(),
		"authorization_endpoint":                iss.URL + "/authorize",
		"token_endpoint":                        iss.URL + "/token",
		"response_types_supported":              []string{"code"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
	})
}

func (iss *Issuer) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	iss.fetches.Add(1)
	iss.mu.Lock()
	keys := make([]map[string]any, 0, len(iss.keys))
	for _, k := range iss.keys {
		keys = append(keys, PublicJWK(k))
	}
	iss.mu.Unlock()
	writeJSON(w, map[string]any{"keys": keys})
}

// PublicJWK is k's public half as a JWK (RFC 7517/7518).
func PublicJWK(k *Key) map[string]any {
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	jwk := map[string]any{"kid": k.ID, "alg": k.Alg, "use": "sig"}
	switch pub := k.Signer.Public().(type) {
	case *rsa.PublicKey:
		jwk["kty"], jwk["n"], jwk["e"] = "RSA", b64(pub.N.Bytes()), b64(big.NewInt(int64(pub.E)).Bytes())
	case *ecdsa.PublicKey:
		pt, _ := pub.Bytes() // 0x04 || X || Y, 32 bytes each on P-256
		jwk["kty"], jwk["crv"], jwk["x"], jwk["y"] = "EC", "P-256", b64(pt[1:33]), b64(pt[33:])
	}
	return jwk
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
