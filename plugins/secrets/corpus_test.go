package secrets

import (
	"encoding/base64"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/plugins/secrets/fake"
)

// Detection, measured. Positives are generated secrets of every kind in
// the contexts a tool result shows them in (package fake); negatives are
// ordinary text: this repository's own files, the npm packages the e2e
// tests install (scripts/npm/node_modules: JavaScript, TypeScript, source
// maps, lockfiles, READMEs), the hand-written hard cases in
// testdata/corpus, and generated identifiers (UUIDs, git SHAs, hashes,
// base64 images, URLs). The test fails above the thresholds below; the
// counts it logs are the ones docs/plugins.md quotes.
const (
	// Every generated secret must be found.
	maxFalseNegatives = 0
	// At most this fraction of ordinary documents may be flagged.
	maxFalsePositiveRate = 0.001
)

func TestDetectionCorpus(t *testing.T) {
	c := testConfig(t, `{}`)

	// Positives.
	samples := fake.New(1).Samples(200)
	missed := map[string]int{}
	for _, s := range samples {
		if m := c.scan(s.Text); m&(1<<kindBit(t, s.Kind)) == 0 {
			missed[s.Kind]++
			if missed[s.Kind] <= 3 {
				t.Errorf("missed %s (found %v) in %q", s.Kind, c.labels(m), s.Text)
			}
		}
	}
	fn := 0
	for _, n := range missed {
		fn += n
	}

	// Negatives.
	var docs []doc
	// This plugin's own tests hold secret-shaped fixtures on purpose, and
	// so do the webhook tests (a signing secret each) and the real-agent
	// suites (each agent's API key).
	docs = append(docs, readTree(t, "../..", func(p string) bool {
		return !strings.Contains(p, "node_modules") && !strings.HasPrefix(p, "../../plugins/secrets/") &&
			!strings.HasSuffix(p, "secrets_module_test.go") && !strings.HasSuffix(p, "e2e/secrets_test.go") &&
			!strings.HasSuffix(p, "webhook_test.go") && !strings.HasSuffix(p, "webhook_asks_test.go") &&
			!strings.HasPrefix(p, "../../internal/agents/")
	})...)
	repo := len(docs)
	// The agents the real-agent suites install are not ordinary text:
	// Gemini CLI's bundle carries Google's installed-app OAuth client
	// secret, which is found as it should be.
	docs = append(docs, readTree(t, "../../scripts/npm", func(p string) bool {
		return !strings.Contains(p, "/@google/gemini-cli") && !strings.Contains(p, "/@anthropic-ai/") && !strings.Contains(p, "/@openai/codex")
	})...)
	npm := len(docs) - repo
	docs = append(docs, readTree(t, "testdata/corpus/negative", func(string) bool { return true })...)
	hand := len(docs) - repo - npm
	docs = append(docs, generatedNegatives()...)
	fp, bytes := 0, 0
	perKind := map[string]int{}
	for _, d := range docs {
		bytes += len(d.text)
		if m := c.scan(d.text); m != 0 {
			fp++
			for _, l := range c.labels(m)[1:] {
				perKind[l]++
			}
			t.Logf("flagged %s: %v", d.name, c.labels(m)[1:])
		}
	}
	if repo == 0 || npm == 0 || hand == 0 {
		t.Fatalf("corpus incomplete: %d repository files, %d npm files, %d hand-written", repo, npm, hand)
	}
	rate := float64(fp) / float64(len(docs))
	t.Logf("positives: %d generated secrets of %d kinds, %d missed", len(samples), builtinKinds, fn)
	t.Logf("negatives: %d documents (%d repository files, %d npm files, %d hand-written, %d generated), %.1f MiB; %d flagged (%.3f %%) %v",
		len(docs), repo, npm, hand, len(docs)-repo-npm-hand, float64(bytes)/(1<<20), fp, 100*rate, sorted(perKind))
	if fn > maxFalseNegatives {
		t.Errorf("%d false negatives (at most %d): %v", fn, maxFalseNegatives, missed)
	}
	if rate > maxFalsePositiveRate {
		t.Errorf("false positive rate %.3f %% (at most %.3f %%)", 100*rate, 100*maxFalsePositiveRate)
	}
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

func kindBit(t *testing.T, name string) Kind {
	for k, n := range kindNames {
		if n == name {
			return Kind(k)
		}
	}
	t.Fatalf("no kind %q", name)
	return 0
}

func sorted(m map[string]int) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%d", strings.TrimPrefix(k, LabelSeen+":"), v))
	}
	sort.Strings(out)
	return out
}
