package plugins_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/fakesecrets"
	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/plugins"
)

// Detection by the secrets module, measured. Positives are generated
// secrets of every kind in the contexts a tool result shows them in
// (internal/fakesecrets); negatives are ordinary text: this repository's
// own files, the npm packages the e2e tests install
// (scripts/npm/node_modules: JavaScript, TypeScript, source maps,
// lockfiles, READMEs), the hand-written hard cases in
// secrets/testdata/corpus, and generated identifiers (UUIDs, git SHAs,
// hashes, base64 images, URLs). Every text is an observe event of the
// embedded module, as a tool result. The test fails above the thresholds
// below; the counts it logs are the ones docs/plugins.md quotes.
const (
	// Every generated secret must be found.
	maxFalseNegatives = 0
	// At most this fraction of ordinary documents may be flagged.
	maxFalsePositiveRate = 0.001
)

// secretsScanner observes texts with the embedded secrets module.
type secretsScanner struct {
	p *plugin.Plugin
}

func newSecretsScanner(t *testing.T) *secretsScanner {
	bin, _ := plugins.Builtin("secrets")
	p, err := plugin.FromBytes(context.Background(), newRuntime(t), &config.Policy{Name: "secrets", TimeoutMs: 20000}, bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return &secretsScanner{p: p}
}

// chunk is the most text one observe gets: a result of up to 1 MiB of
// envelope even if every byte is escaped.
const chunk = 128 << 10

// scan returns the kinds found in text (without the plain "secret_seen"),
// observing it in chunks cut at line ends.
func (s *secretsScanner) scan(t *testing.T, text string) []string {
	var kinds []string
	for len(text) > 0 {
		n := len(text)
		if n > chunk {
			n = chunk
			if i := strings.LastIndexByte(text[:n], '\n'); i > 0 {
				n = i + 1
			}
		}
		kinds = append(kinds, s.observe(t, text[:n])...)
		text = text[n:]
	}
	return kinds
}

func (s *secretsScanner) observe(t *testing.T, text string) []string {
	b, _ := json.Marshal(text)
	env := `{"abi":1,"event":"observe","session":{"id":"s","labels":[]},"call":{"capabilities":{"reads_private_data":true,` +
		`"sees_untrusted_content":false,"can_exfiltrate":false},"tool":{"name":"read_file"},"arguments":{}},` +
		`"result":{"is_error":false,"text":` + string(b) + `},"plugin":{"name":"secrets","config":{}}}`
	res, err := s.p.Raw(context.Background(), plugin.EventObserve, []byte(env))
	if err != nil {
		t.Fatalf("observe of %d bytes: %v", len(text), err)
	}
	var kinds []string
	for _, l := range res.Labels {
		if k, ok := strings.CutPrefix(l, "secret_seen:"); ok {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

func TestSecretsDetectionCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("scans the repository and its npm packages")
	}
	s := newSecretsScanner(t)

	// Positives.
	samples := fakesecrets.New(1).Samples(200)
	missed := map[string]int{}
	for _, smp := range samples {
		if found := s.scan(t, smp.Text); !contains(found, smp.Kind) {
			missed[smp.Kind]++
			if missed[smp.Kind] <= 3 {
				t.Errorf("missed %s (found %v) in %q", smp.Kind, found, smp.Text)
			}
		}
	}
	fn := 0
	for _, n := range missed {
		fn += n
	}

	// Negatives.
	var docs []doc
	// The secrets module's own sources and the tests of it hold
	// secret-shaped fixtures on purpose, and so do the webhook tests (a
	// signing secret each) and the real-agent suites (each agent's API key).
	docs = append(docs, readTree(t, "..", func(p string) bool {
		return !strings.Contains(p, "node_modules") && !strings.HasPrefix(p, "../plugins/secrets/") &&
			!strings.HasPrefix(p, "../internal/fakesecrets/") &&
			!strings.HasSuffix(p, "secrets_module_test.go") && !strings.HasSuffix(p, "e2e/secrets_test.go") &&
			!strings.HasSuffix(p, "webhook_test.go") && !strings.HasSuffix(p, "webhook_asks_test.go") &&
			!strings.HasPrefix(p, "../internal/agents/")
	})...)
	repo := len(docs)
	// The agents the real-agent suites install are not ordinary text:
	// Gemini CLI's bundle carries Google's installed-app OAuth client
	// secret, which is found as it should be.
	docs = append(docs, readTree(t, "../scripts/npm", func(p string) bool {
		return !strings.Contains(p, "/@google/gemini-cli") && !strings.Contains(p, "/@anthropic-ai/") && !strings.Contains(p, "/@openai/codex")
	})...)
	npm := len(docs) - repo
	docs = append(docs, readTree(t, "secrets/testdata/corpus/negative", func(string) bool { return true })...)
	hand := len(docs) - repo - npm
	docs = append(docs, generatedNegatives()...)
	fp, bytes := 0, 0
	perKind := map[string]int{}
	for _, d := range docs {
		bytes += len(d.text)
		if found := s.scan(t, d.text); len(found) > 0 {
			fp++
			for _, k := range found {
				perKind[k]++
			}
			t.Logf("flagged %s: %v", d.name, found)
		}
	}
	if repo == 0 || npm == 0 || hand == 0 {
		t.Fatalf("corpus incomplete: %d repository files, %d npm files, %d hand-written", repo, npm, hand)
	}
	rate := float64(fp) / float64(len(docs))
	t.Logf("positives: %d generated secrets of 13 kinds, %d missed", len(samples), fn)
	t.Logf("negatives: %d documents (%d repository files, %d npm files, %d hand-written, %d generated), %.1f MiB; %d flagged (%.3f %%) %v",
		len(docs), repo, npm, hand, len(docs)-repo-npm-hand, float64(bytes)/(1<<20), fp, 100*rate, sorted(perKind))
	if fn > maxFalseNegatives {
		t.Errorf("%d false negatives (at most %d): %v", fn, maxFalseNegatives, missed)
	}
	if rate > maxFalsePositiveRate {
		t.Errorf("false positive rate %.3f %% (at most %.3f %%)", 100*rate, 100*maxFalsePositiveRate)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

type doc struct{ name, text string }

// readTree reads the text files under root that keep accepts.
func readTree(t *testing.T, root string, keep func(string) bool) []doc {
	t.Helper()
	var out []doc
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !keep(p) || !d.Type().IsRegular() {
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".md", ".toml", ".json", ".rs", ".ts", ".js", ".mjs", ".cjs", ".map", ".sh", ".yaml", ".yml", ".txt",
			".wat", ".c", ".h", ".lock", ".mod", ".sum", ".html", ".css":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, doc{p, string(b)})
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

// generatedNegatives are identifiers that look random and are not secret.
func generatedNegatives() []doc {
	r := rand.New(rand.NewPCG(2, 3))
	hex := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "0123456789abcdef"[r.IntN(16)]
		}
		return string(b)
	}
	raw := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return b
	}
	var out []doc
	for i := 0; i < 200; i++ {
		u := hex(32)
		out = append(out,
			doc{"uuid", fmt.Sprintf("id: %s-%s-%s-%s-%s\nrequest_id=%s", u[:8], u[8:12], u[12:16], u[16:20], u[20:], hex(32))},
			doc{"git", fmt.Sprintf("commit %s\nAuthor: A <a@example.com>\n\nMerge %s into %s\n", hex(40), hex(7), hex(40))},
			doc{"hashes", fmt.Sprintf("sha256: %s\nsha512=%s\nchecksum: %s", hex(64), hex(128), hex(40))},
			doc{"image", `<img src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(raw(300+r.IntN(2000))) + `">`},
			doc{"integrity", `"integrity": "sha512-` + base64.StdEncoding.EncodeToString(raw(64)) + `"`},
			doc{"url", fmt.Sprintf("https://example.com/search?q=%s&session=%s&page=2#top", hex(12), hex(24))},
			doc{"blob", base64.StdEncoding.EncodeToString(raw(1000))},
		)
	}
	return out
}

func sorted(m map[string]int) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(out)
	return out
}
