// Package fakesecrets makes secrets in the formats the secrets plugin detects,
// from a seeded random source, for its tests: nothing here was ever a real
// credential, and nothing secret-shaped is committed to the repository.
// Keys are generated at test time: PEM blocks with crypto/rsa and
// crypto/ecdsa, JWTs signed with a test key.
package fakesecrets

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/rand/v2"
	"strings"
	"sync"
)

// Sample is one generated secret in a context that shows it as a tool
// result would: a config line, an env file, a JSON document.
type Sample struct {
	Kind  string // the plugin's kind name, e.g. "github_token"
	Text  string // the context with the secret in it
	Token string // the secret alone
}

const (
	upperDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	alnum       = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	url64       = alnum + "-_"
	b64         = alnum + "+/"
	hexDigits   = "0123456789abcdef"
	digits      = "0123456789"
)

// Gen makes samples from a seed.
type Gen struct{ r *rand.Rand }

// New returns a generator; the same seed gives the same samples (except
// PEM keys, which crypto/rsa and crypto/ecdsa randomise themselves).
func New(seed uint64) *Gen { return &Gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

// From draws n characters from set; at least one digit, one upper and one
// lower case letter when set has them (real generated keys nearly always do).
func (g *Gen) From(set string, n int) string {
	for {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[g.r.IntN(len(set))]
		}
		s := string(b)
		if n < 12 || !strings.ContainsAny(set, "A") || !strings.ContainsAny(set, "a") || strings.ContainsAny(s, digits) &&
			strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz") {
			return s
		}
	}
}

func (g *Gen) pick(list ...string) string { return list[g.r.IntN(len(list))] }

// Samples returns n samples of every kind.
func (g *Gen) Samples(n int) []Sample {
	var out []Sample
	for i := 0; i < n; i++ {
		for _, f := range []func() Sample{g.AWSAccessKey, g.AWSSecretKey, g.GCPServiceAccount, g.AzureKey, g.GitHub,
			g.Slack, g.SlackWebhook, g.PrivateKey, g.JWT, g.Stripe, g.OpenAI, g.Anthropic, g.Named} {
			out = append(out, f())
		}
	}
	return out
}

func (g *Gen) AWSAccessKey() Sample {
	tok := g.pick("AKIA", "ASIA") + g.From(upperDigits, 16)
	ctx := g.pick("aws_access_key_id = %s\n", "export AWS_ACCESS_KEY_ID=%s\n", `{"AccessKeyId": "%s", "Expiration": "2026-05-01T12:00:00Z"}`,
		"[default]\nregion = us-east-1\naws_access_key_id=%s\n")
	return Sample{"aws_access_key", strings.Replace(ctx, "%s", tok, 1), tok}
}

func (g *Gen) AWSSecretKey() Sample {
	tok := g.From(b64, 40)
	ctx := g.pick("aws_secret_access_key = %s\n", "AWS_SECRET_ACCESS_KEY=%s", `{"SecretAccessKey": "%s"}`,
		"[profile dev]\naws_secret_access_key=%s\n")
	return Sample{"aws_secret_key", strings.Replace(ctx, "%s", tok, 1), tok}
}

var keys struct {
	once sync.Once
	rsa  *rsa.PrivateKey
	ec   *ecdsa.PrivateKey
}

// testKeys generates one RSA and one EC key per process (RSA generation
// is slow).
func testKeys() (*rsa.PrivateKey, *ecdsa.PrivateKey) {
	keys.once.Do(func() {
		var err error
		if keys.rsa, err = rsa.GenerateKey(crand.Reader, 2048); err != nil {
			panic(err)
		}
		if keys.ec, err = ecdsa.GenerateKey(elliptic.P256(), crand.Reader); err != nil {
			panic(err)
		}
	})
	return keys.rsa, keys.ec
}

// PEM returns a private key block of one of the usual types.
func (g *Gen) PEM() string {
	rk, ek := testKeys()
	switch g.r.IntN(4) {
	case 0:
		return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)}))
	case 1:
		der, _ := x509.MarshalPKCS8PrivateKey(rk)
		return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	case 2:
		der, _ := x509.MarshalECPrivateKey(ek)
		return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	}
	// OpenSSH's container, with a random body of a realistic size.
	body := make([]byte, 400)
	for i := range body {
		body[i] = byte(g.r.IntN(256))
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: body}))
}

func (g *Gen) PrivateKey() Sample {
	k := g.PEM()
	ctx := g.pick("$ cat ~/.ssh/id_rsa\n%s", "%s", "key file contents:\n\n%s\n(end)")
	return Sample{"private_key", strings.Replace(ctx, "%s", k, 1), k}
}

func (g *Gen) GCPServiceAccount() Sample {
	rk, _ := testKeys()
	der, _ := x509.MarshalPKCS8PrivateKey(rk)
	k := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	doc := map[string]string{
		"type": "service_account", "project_id": "demo-project", "private_key_id": g.From(hexDigits, 40),
		"private_key": k, "client_email": "svc@demo-project.iam.gserviceaccount.com", "client_id": g.From(digits, 21),
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return Sample{"gcp_service_account", string(b), k}
}

func (g *Gen) AzureKey() Sample {
	raw := make([]byte, 64)
	for i := range raw {
		raw[i] = byte(g.r.IntN(256))
	}
	tok := base64.StdEncoding.EncodeToString(raw)
	return Sample{"azure_storage_key", "DefaultEndpointsProtocol=https;AccountName=demoacct;AccountKey=" + tok +
		";EndpointSuffix=core.windows.net", tok}
}

func (g *Gen) GitHub() Sample {
	var tok string
	if g.r.IntN(3) == 0 {
		tok = "github_pat_" + g.From(alnum, 22) + "_" + g.From(alnum, 59)
	} else {
		tok = g.pick("ghp_", "gho_", "ghu_", "ghs_", "ghr_") + g.From(alnum, 36)
	}
	ctx := g.pick("GITHUB_TOKEN=%s\n", "git clone https://x-access-token:%s@github.com/acme/site.git", `{"token": "%s", "expires_at": null}`,
		"Authorization: token %s\n")
	return Sample{"github_token", strings.Replace(ctx, "%s", tok, 1), tok}
}

func (g *Gen) Slack() Sample {
	tok := g.pick("xoxb-", "xoxp-", "xoxa-", "xoxr-") + g.From(digits, 12) + "-" + g.From(digits, 13) + "-" + g.From(alnum, 24)
	ctx := g.pick("SLACK_BOT_TOKEN=%s", `slack: {token: "%s"}`, "Bearer %s")
	return Sample{"slack_token", strings.Replace(ctx, "%s", tok, 1), tok}
}

func (g *Gen) SlackWebhook() Sample {
	tok := "https://hooks.slack.com/services/T" + g.From(upperDigits, 8) + "/B" + g.From(upperDigits, 10) + "/" + g.From(alnum, 24)
	return Sample{"slack_webhook", "webhook_url: " + tok + "\n", tok}
}

// JWT returns a token signed with HS256 and a test key.
func (g *Gen) JWT() Sample {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(g.pick(`{"alg":"HS256","typ":"JWT"}`, `{"typ":"JWT","alg":"HS256"}`, `{"alg":"HS256","kid":"`+g.From(alnum, 8)+`"}`)))
	payload := enc.EncodeToString([]byte(`{"sub":"` + g.From(digits, 8) + `","name":"Test User","iat":1714564800}`))
	mac := hmac.New(sha256.New, []byte("test key, not a secret"))
	mac.Write([]byte(header + "." + payload))
	tok := header + "." + payload + "." + enc.EncodeToString(mac.Sum(nil))
	ctx := g.pick("Authorization: Bearer %s\n", `{"access_token":"%s","token_type":"Bearer"}`, "session cookie: id=%s; Path=/")
	return Sample{"jwt", strings.Replace(ctx, "%s", tok, 1), tok}
}

func (g *Gen) Stripe() Sample {
	tok := g.pick("sk_live_", "rk_live_") + g.From(alnum, 24+g.r.IntN(76))
	return Sample{"stripe_key", "STRIPE_SECRET_KEY=" + tok, tok}
}

func (g *Gen) OpenAI() Sample {
	var tok string
	switch g.r.IntN(3) {
	case 0:
		tok = "sk-" + g.From(alnum, 48)
	case 1:
		tok = "sk-proj-" + g.From(url64, 156)
	default:
		tok = "sk-svcacct-" + g.From(url64, 120)
	}
	return Sample{"openai_key", g.pick("OPENAI_API_KEY=", "openai.api_key = '", "key: ") + tok, tok}
}

func (g *Gen) Anthropic() Sample {
	tok := "sk-ant-api03-" + g.From(url64, 93) + "AA"
	return Sample{"anthropic_key", g.pick("ANTHROPIC_API_KEY=", "x-api-key: ", `{"apiKey": "`) + tok, tok}
}

// Named returns a high-entropy value assigned to a secret-like name.
func (g *Gen) Named() Sample {
	tok := g.From(g.pick(alnum, hexDigits, alnum+"!@#%^&*"), 16+g.r.IntN(30))
	ctx := g.pick("DB_PASSWORD=%s\n", `{"client_secret": "%s"}`, "  password: %s\n", "api_key = \"%s\"", "SECRET_KEY='%s'",
		"auth_token: %s", "mysql --password=%s -u root")
	return Sample{"named_secret", strings.Replace(ctx, "%s", tok, 1), tok}
}
