package examples_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/plugin"
	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// The kits' helpers (regular expressions, through the host's regex imports,
// and the shell-word splitter) are held to pdk/testdata/regex.json and
// shellwords.json by a small test plugin per kit (pdk/<kit>/vectors), built
// with the kit's real toolchain and run in the real host. The Go kit's
// SplitWords is held to the same word vectors in pdk/go; the regex cases
// have no expected values: Go's regexp is the expectation.

// helperKits maps a kit to the folder of its vectors plugin.
var helperKits = []struct{ name, dir string }{
	{"rust", "pdk/rust/vectors"},
	{"c", "pdk/c/vectors"},
	{"assemblyscript", "pdk/assemblyscript/vectors"},
}

type wordsVector struct {
	Line  string   `json:"line"`
	Words []string `json:"words"`
	Error bool     `json:"error"`
}

func readVectors(t testing.TB, name string, into any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "pdk", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

var (
	vectorsMu    sync.Mutex
	vectorsBuilt = map[string]*built{}
)

// vectorsBuild builds a kit's vectors plugin once per test binary.
func vectorsBuild(t testing.TB, dir string) *built {
	vectorsMu.Lock()
	defer vectorsMu.Unlock()
	if b, ok := vectorsBuilt[dir]; ok {
		return b
	}
	b := &built{path: filepath.Join(t.TempDir(), "vectors.wasm")}
	vectorsBuilt[dir] = b
	cmd := exec.Command(filepath.Join(repoRoot(t), dir, "build.sh"), b.path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == exitMissingToolchain:
		b.missing, b.err = true, errors.New(strings.TrimSpace(out.String()))
	case err != nil:
		b.err = fmt.Errorf("%v:\n%s", err, out.String())
	default:
		b.wasm, b.err = os.ReadFile(b.path)
	}
	return b
}

// buildVectors is vectorsBuild for a test: it skips (or fails under
// TOOLWARDEN_REQUIRE_TOOLCHAINS=1) when the toolchain is missing, as
// buildExample does.
func buildVectors(t *testing.T, dir string) []byte {
	t.Helper()
	return vectorsBuild(t, dir).module(t, dir)
}

// vectorsPlugin is a loaded vectors plugin with its patterns.
type vectorsPlugin struct {
	p *plugin.Plugin
}

func loadVectorsPlugin(t testing.TB, rt *plugin.Runtime, bin []byte, patterns []string) *vectorsPlugin {
	t.Helper()
	if patterns == nil {
		patterns = []string{}
	}
	list := make([]any, len(patterns))
	for i, p := range patterns {
		list[i] = p
	}
	p, err := plugin.FromBytes(context.Background(), rt, &config.Policy{
		Name: "vectors", Config: map[string]any{"patterns": list}, TimeoutMs: 5000,
	}, bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return &vectorsPlugin{p: p}
}

// ask runs one check with the given arguments and returns the verdict's
// code and reason as the plugin wrote them (before the host trims reasons
// for display).
func (v *vectorsPlugin) ask(args map[string]any) (code, reason string, err error) {
	call, _ := json.Marshal(map[string]any{"tool": map[string]any{"name": "t"}, "arguments": args})
	input := `{"abi":1,"event":"check","session":{"id":"test","labels":[]},"call":` + string(call) +
		`,"baseline":{"decision":"ask","mode":"auto","rememberable":true},"time":"2026-01-01T00:00:00Z","plugin":{"name":"vectors","config":{}}}`
	res, err := v.p.Raw(context.Background(), plugin.EventCheck, []byte(input))
	if err != nil {
		return "", "", err
	}
	var out struct{ Code, Reason string }
	if err := json.Unmarshal(res.Output, &out); err != nil {
		return "", "", fmt.Errorf("output %q: %v", res.Output, err)
	}
	return out.Code, out.Reason, nil
}

// matches asks whether pattern i (as configured) matches input.
func (v *vectorsPlugin) matches(i int, input string) (match bool, compileErr string, err error) {
	code, reason, err := v.ask(map[string]any{"pattern": i, "input": input})
	switch {
	case err != nil:
		return false, "", err
	case code == "match", code == "nomatch":
		return code == "match", "", nil
	case code == "error":
		return false, reason, nil
	}
	return false, "", fmt.Errorf("unexpected code %q (%q)", code, reason)
}

// words asks the plugin to split line.
func (v *vectorsPlugin) words(line string) (words []string, refusal string, err error) {
	code, reason, err := v.ask(map[string]any{"line": line})
	if err != nil {
		return nil, "", err
	}
	switch code {
	case "error":
		return nil, reason, nil
	case "words":
		words, err = decodeWords(reason)
		return words, "", err
	}
	return nil, "", fmt.Errorf("unexpected code %q (%q)", code, reason)
}

// decodeWords reads <UTF-8 length>:<word>... as the vectors plugins write it.
func decodeWords(s string) ([]string, error) {
	words := []string{}
	for s != "" {
		colon := strings.IndexByte(s, ':')
		n, err := strconv.Atoi(s[:max(colon, 0)])
		if colon < 0 || err != nil || n > len(s)-colon-1 {
			return nil, fmt.Errorf("bad word encoding at %q", s)
		}
		words = append(words, s[colon+1:colon+1+n])
		s = s[colon+1+n:]
	}
	return words, nil
}

// Every kit compiles and matches the patterns of pdk/testdata/regex.json
// exactly as Go's regexp does, and refuses what Go refuses with Go's text:
// the kits call the host's regex imports (pdk/ABI.md section 16), and this
// holds their wiring (pattern and subject bytes in, handles kept from
// configure, the error text out) to it.
func TestKitRegexMatchesGo(t *testing.T) {
	var f struct{ Patterns, Inputs []string }
	readVectors(t, "regex.json", &f)
	refused := 0
	for _, pat := range f.Patterns {
		if _, err := regexp.Compile(pat); err != nil {
			refused++
		}
	}
	if refused == 0 || refused == len(f.Patterns) {
		t.Fatalf("regex.json: %d of %d patterns refused by Go; keep both kinds", refused, len(f.Patterns))
	}
	rt := quietRuntime(t)
	for _, kit := range helperKits {
		t.Run(kit.name, func(t *testing.T) {
			v := loadVectorsPlugin(t, rt, buildVectors(t, kit.dir), f.Patterns)
			for i, pat := range f.Patterns {
				want, goErr := regexp.Compile(pat)
				for _, in := range f.Inputs {
					got, compileErr, err := v.matches(i, in)
					switch {
					case err != nil:
						t.Fatalf("%q on %q: %v", pat, in, err)
					case goErr != nil && compileErr != goErr.Error():
						t.Fatalf("%q: refusal %q, Go's is %q", pat, compileErr, goErr)
					case goErr == nil && compileErr != "":
						t.Fatalf("%q refused (%s); Go compiles it", pat, compileErr)
					case goErr == nil && got != want.MatchString(in):
						t.Errorf("%q on %q: match %v, Go says %v", pat, in, got, !got)
					}
				}
			}
		})
	}
}

// TestKitShellWordsVectors runs pdk/testdata/shellwords.json through each
// kit's splitter.
func TestKitShellWordsVectors(t *testing.T) {
	var f struct{ Cases []wordsVector }
	readVectors(t, "shellwords.json", &f)
	rt := quietRuntime(t)
	for _, kit := range helperKits {
		t.Run(kit.name, func(t *testing.T) {
			v := loadVectorsPlugin(t, rt, buildVectors(t, kit.dir), nil)
			for _, c := range f.Cases {
				got, refusal, err := v.words(c.Line)
				switch {
				case err != nil:
					t.Errorf("%q: %v", c.Line, err)
				case c.Error && refusal == "":
					t.Errorf("%q split into %q; want a refusal", c.Line, got)
				case !c.Error && refusal != "":
					t.Errorf("%q refused (%s); want %q", c.Line, refusal, c.Words)
				case !c.Error && !reflect.DeepEqual(got, c.Words):
					t.Errorf("%q split into %q; want %q", c.Line, got, c.Words)
				}
			}
		})
	}
}

// FuzzKitShellWords compares each kit's splitter with the Go kit's.
func FuzzKitShellWords(f *testing.F) {
	var vec struct{ Cases []wordsVector }
	readVectors(f, "shellwords.json", &vec)
	for _, c := range vec.Cases {
		f.Add(c.Line)
	}
	rt := quietRuntime(f)
	var plugins []*vectorsPlugin
	var names []string
	for _, kit := range helperKits {
		if b := buildOnceVectors(f, kit.dir); b != nil {
			plugins = append(plugins, loadVectorsPlugin(f, rt, b, nil))
			names = append(names, kit.name)
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		if !utf8.ValidString(line) {
			return // JSON strings carry only UTF-8
		}
		want, wantErr := pdk.SplitWords(line)
		for i, v := range plugins {
			got, refusal, err := v.words(line)
			switch {
			case err != nil:
				t.Fatalf("%s: %q: %v", names[i], line, err)
			case (refusal != "") != (wantErr != nil):
				t.Fatalf("%s: %q: refusal %q, Go kit %v", names[i], line, refusal, wantErr)
			case wantErr == nil && !reflect.DeepEqual(got, want):
				t.Fatalf("%s: %q split into %q, Go kit %q", names[i], line, got, want)
			}
		}
	})
}

// buildOnceVectors is vectorsBuild for fuzz setup: a kit whose toolchain
// is missing is left out (nil) unless toolchains are required. The fuzzing
// engine restarts its worker processes now and then, and each would build
// all three plugins again, so while fuzzing (-test.fuzz set) a build is
// kept in the temporary folder under a hash of the kit's sources.
func buildOnceVectors(f *testing.F, dir string) []byte {
	f.Helper()
	var cached string
	if fz := flag.Lookup("test.fuzz"); fz != nil && fz.Value.String() != "" {
		cached = filepath.Join(os.TempDir(), "toolwarden-vectors-"+kitSourcesHash(f, dir)+".wasm")
		if bin, err := os.ReadFile(cached); err == nil {
			return bin
		}
	}
	b := vectorsBuild(f, dir)
	if b.missing && !requireToolchains() {
		f.Logf("SKIP %s: toolchain missing (%v)", dir, b.err)
		return nil
	}
	if b.err != nil {
		f.Fatalf("%s: %v", dir, b.err)
	}
	if cached != "" {
		tmp := cached + "." + strconv.Itoa(os.Getpid())
		if os.WriteFile(tmp, b.wasm, 0o644) == nil {
			os.Rename(tmp, cached)
		}
	}
	return b.wasm
}

// kitSourcesHash hashes every file under the kit's folder (pdk/<kit>) but
// built outputs: the sources of the kit and of its vectors plugin.
func kitSourcesHash(t testing.TB, dir string) string {
	h := sha256.New()
	root := filepath.Join(repoRoot(t), filepath.Dir(dir))
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".wasm") {
			return err
		}
		raw, err := os.ReadFile(path)
		io.WriteString(h, path+"\x00")
		h.Write(raw)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
