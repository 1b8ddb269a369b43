package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// maxJWKS bounds the issuer's key set document.
const maxJWKS = 1 << 20

// jwksRefetch is the least time between two fetches of the key set that a
// token's unknown kid (or a signature no cached key verifies) triggers: the
// issuer's rotation is picked up at once, while a stream of forged tokens
// costs the issuer at most one request per interval.
const jwksRefetch = 10 * time.Second

// keySet is the issuer's JWKS, cached and refetched on a miss at most once
// per refetch interval. It is go-oidc's KeySet; go-oidc's own remote key set
// refetches on every miss, which an attacker could turn into a request to
// the issuer per forged token.
type keySet struct {
	url     string
	client  *http.Client
	refetch time.Duration

	keys atomic.Pointer[keyGen]
	// mu serialises fetches; fetched is when the last one started.
	mu      sync.Mutex
	fetched time.Time
}

// keyGen is one fetched set; gen counts fetches that succeeded, so a
// goroutine that waited for another's fetch knows it has new keys to try.
type keyGen struct {
	keys []jose.JSONWebKey
	gen  int
}

// verifiedKey carries, through go-oidc's verifier, whether a key verified
// the signature and the payload it verified: an error after that is about
// the claims, which can then be read to say which one.
type verifiedKey struct {
	payload []byte
}

type verifiedKeyCtx struct{}

func newKeySet(url string, client *http.Client) *keySet {
	k := &keySet{url: url, client: client, refetch: jwksRefetch}
	k.keys.Store(&keyGen{})
	return k
}

// VerifySignature implements oidc.KeySet. go-oidc has already checked the
// algorithm against the allow-list; the key must also be one the issuer
// publishes for that algorithm.
func (k *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(raw, allowedAlgs)
	if err != nil || len(jws.Signatures) != 1 {
		return nil, errors.New("malformed token")
	}
	h := jws.Signatures[0].Header
	cur := k.keys.Load()
	payload, ok := verifyWith(jws, h.KeyID, h.Algorithm, cur.keys)
	if !ok && k.refresh(ctx, cur.gen) {
		payload, ok = verifyWith(jws, h.KeyID, h.Algorithm, k.keys.Load().keys)
	}
	if !ok {
		return nil, errors.New("no key of the issuer verifies the signature")
	}
	if v, _ := ctx.Value(verifiedKeyCtx{}).(*verifiedKey); v != nil {
		v.payload = payload
	}
	return payload, nil
}

// verifyWith tries the keys with the token's kid (every key when it has
// none) whose declared algorithm, if any, is the token's.
func verifyWith(jws *jose.JSONWebSignature, kid, alg string, keys []jose.JSONWebKey) ([]byte, bool) {
	for i := range keys {
		key := &keys[i]
		if kid != "" && key.KeyID != kid || key.Algorithm != "" && key.Algorithm != alg {
			continue
		}
		if payload, err := jws.Verify(key); err == nil {
			return payload, true
		}
	}
	return nil, false
}

// refresh fetches the set again unless one was fetched within the refetch
// interval. It reports whether there are keys newer than generation seen.
func (k *keySet) refresh(ctx context.Context, seen int) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys.Load().gen != seen {
		return true // another request fetched while this one waited
	}
	if !k.fetched.IsZero() && time.Since(k.fetched) < k.refetch {
		return false
	}
	k.fetched = time.Now()
	keys, err := k.fetch(ctx)
	if err != nil {
		return false
	}
	k.keys.Store(&keyGen{keys: keys, gen: seen + 1})
	return true
}

// load fetches the set for the first time; NewOIDC fails when it cannot.
func (k *keySet) load(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	// fetched stays zero: a key rotated just after start is picked up by
	// the first token that needs it.
	keys, err := k.fetch(ctx)
	if err != nil {
		return err
	}
	k.keys.Store(&keyGen{keys: keys, gen: k.keys.Load().gen + 1})
	return nil
}

func (k *keySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, k.url, nil)
	if err != nil {
		return nil, fmt.Errorf("key set URL %s: %w", k.url, err)
	}
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the issuer's keys (jwks_url %s): %w", k.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the issuer's keys from %s: HTTP %s", k.url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKS+1))
	if err != nil {
		return nil, fmt.Errorf("reading the issuer's keys from %s: %w", k.url, err)
	}
	if len(body) > maxJWKS {
		return nil, fmt.Errorf("the key set at %s is larger than 1 MiB", k.url)
	}
	return parseJWKS(k.url, body)
}

// parseJWKS keeps the set's public signing keys. A key this program cannot
// use (another type, an encryption key) is skipped, as RFC 7517 section 5
// asks, rather than failing the whole set; a symmetric key is never used,
// since a "public" HMAC key would let anyone sign.
func parseJWKS(url string, body []byte) ([]jose.JSONWebKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("the key set at %s is not a JWKS document: %w", url, err)
	}
	var out []jose.JSONWebKey
	for _, raw := range doc.Keys {
		var key jose.JSONWebKey
		if json.Unmarshal(raw, &key) != nil || key.Use == "enc" {
			continue
		}
		switch key.Key.(type) {
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
			key = key.Public()
		default:
			continue
		}
		out = append(out, key)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the key set at %s has no public signing key", url)
	}
	return out, nil
}
