package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	pdk "github.com/toolwarden/toolwarden/pdk/go"
	"github.com/toolwarden/toolwarden/plugins/secrets"
	"github.com/toolwarden/toolwarden/plugins/secrets/fake"
)

// secretsTwins is one secrets config in the shipped module and in the Go
// reference (plugins/secrets).
type secretsTwins struct{ *moduleTwins }

func newSecretsTwins(t testing.TB, host *Plugin, cfg any) *secretsTwins {
	t.Helper()
	return &secretsTwins{newModuleTwins(t, host, "secrets", secrets.New(), cfg)}
}

func (s *secretsTwins) observe(t testing.TB, text string, labels []string) []byte {
	t.Helper()
	env := s.in.appendObserve(nil, &policy.ObserveInput{Session: "s", Labels: labels, Server: "x", App: "x",
		Tool: testTool, Arguments: []byte(`{}`), Result: text})
	_, out := s.run(t, EventObserve, s.withConfig(env))
	return out
}

func (s *secretsTwins) check(t testing.TB, tool, args string, exfiltrate bool, labels []string) (uint32, []byte) {
	t.Helper()
	c := checkInput(args, labels...)
	c.Tool = &hints.Tool{Name: tool, HashHex: testTool.HashHex}
	c.Caps = hints.Capabilities{CanExfiltrate: exfiltrate}
	return s.run(t, EventCheck, s.envelope(c))
}

func loadSecrets(t testing.TB) *Plugin {
	t.Helper()
	rt := newRuntime(t, Options{PoolSize: 1})
	// A deadline for -race and busy machines: the 1 MiB benchmark shows
	// what an event costs.
	p, err := Load(context.Background(), rt, &config.Policy{Name: "secrets", Builtin: "secrets", TimeoutMs: 20000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// secretsTexts are the texts the differential test scans: generated
// secrets of every kind in context, near misses made from them (cut
// short, glued to a letter, one byte changed), the hand-written negatives,
// and random mixes of all of these with JSON-hostile bytes.
func secretsTexts(t testing.TB) []string {
	g := fake.New(7)
	var texts []string
	for _, s := range g.Samples(6) {
		texts = append(texts, s.Text, s.Token,
			s.Token[:len(s.Token)-1], "x"+s.Token, s.Token+"x", "_"+s.Token, "-"+s.Token,
			strings.Replace(s.Text, s.Token, s.Token[:len(s.Token)/2]+"\x00"+s.Token[len(s.Token)/2:], 1),
			strings.Replace(s.Text, s.Token, strings.ToLower(s.Token), 1))
	}
	for _, f := range []string{"placeholders.txt", "prose.txt"} {
		b, err := os.ReadFile(filepath.Join("../../plugins/secrets/testdata/corpus/negative", f))
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, strings.Split(string(b), "\n")...)
	}
	texts = append(texts, "", "=", ":", "password=", "password:", `"token": "`, "-----BEGIN ", "eyJ", "eyJ.", "eyJa.bc.",
		"sk-", "sk-ant-", "ghp_", "github_pat_", "xoxb-", "AKIA", "AccountKey=", "hooks.slack.com/services/",
		"password = \"\xff\xfe"+strings.Repeat("Ab1", 8)+"\"", "token:\t'"+strings.Repeat("Zz9.", 70)+"'",
		"api_key=="+strings.Repeat("q1W", 86), "secret => "+strings.Repeat("x", 300), "café ☕ token=😀😀😀😀😀😀aB3",
		"acme_live_"+g.From("abcdefghijklmnopqrstuvwxyz0123456789", 24), "xy_"+g.From("ABCDEFGHIJ0123456789", 30))
	r := rand.New(rand.NewPCG(11, 13))
	seps := []string{" ", "\n", "\\n", "\"", "'", ":", "=", ": ", "\t", "\u2028", "\xff", ",", "{", "}", "-", "_", "."}
	n := len(texts)
	for i := 0; i < 600; i++ {
		var b strings.Builder
		for j := r.IntN(5); j >= 0; j-- {
			b.WriteString(texts[r.IntN(n)])
			b.WriteString(seps[r.IntN(len(seps))])
		}
		texts = append(texts, b.String())
	}
	return texts
}

// The shipped secrets module (Rust, plugins/secrets/rust) and the Go
// reference (plugins/secrets) give the same return code and the same
// output bytes on observe and check events the host builds, for
// generated secrets of every kind, near misses, ordinary text, arguments
// of every shape, session labels and configs, good and bad.
func TestSecretsModuleMatchesGoReference(t *testing.T) {
	host := loadSecrets(t)
	texts := secretsTexts(t)
	g := fake.New(8)
	gh, ak := g.GitHub().Token, g.AWSAccessKey().Token
	configs := []any{
		map[string]any{},
		map[string]any{"mode": "deny"},
		map[string]any{"mode": "ask", "allow": []string{gh, ak, "x"}},
		map[string]any{"disable": []string{"named_secret", "jwt", "private_key"}},
		map[string]any{"prefixes": []any{map[string]any{"prefix": "acme_live_", "kind": "acme_key", "min_length": 24},
			map[string]any{"prefix": "xy_", "kind": "xy"}}, "mode": "deny"},
	}
	labelSets := [][]string{nil, {secrets.LabelSeen}, {secrets.LabelSeen + ":github_token"},
		{"a", secrets.LabelSeen, secrets.LabelSeen + ":acme_key", secrets.LabelSeen + ":jwt", secrets.LabelSeen + ":unknown"},
		{secrets.LabelSeen + "x", secrets.LabelSeen + ":"}}
	names := []string{"body", "", "/path", "a~b/c", "password", "api_key", "SecretAccessKey", "\xffname", strings.Repeat("k", 300), gh, "x" + gh}
	seen := map[string]int{}
	events := 0
	for _, cfg := range configs {
		s := newSecretsTwins(t, host, cfg)
		for i, text := range texts {
			labels := labelSets[i%len(labelSets)]
			out := s.observe(t, text, labels)
			for _, l := range strings.Split(string(out), `"`) {
				if strings.HasPrefix(l, secrets.LabelSeen) {
					seen[l]++
				}
			}
			name := names[i%len(names)]
			other := texts[(i*7+3)%len(texts)]
			args := fmt.Sprintf(`{%s:%s,"n":{"deep":[%s,{%s:%s}],"k":7},"arr":[1,true,null,%s]}`,
				jsonRaw(name), jsonRaw(text), jsonRaw(other), jsonRaw(names[(i+1)%len(names)]), jsonRaw(text), jsonRaw(other))
			for _, exfil := range []bool{false, true} {
				_, out := s.check(t, "send \"mail\"\n", args, exfil, labels)
				for _, k := range []string{`"decision":"ask"`, `"decision":"deny"`, secrets.CodeArguments, secrets.CodeSession, `"arguments":[`,
					"(in an argument's name)", "; this session has also seen", "a secret,"} {
					if bytes.Contains(out, []byte(k)) {
						seen[k]++
					}
				}
			}
			events += 3
		}
		s.close()
	}
	for _, want := range []string{`"decision":"ask"`, `"decision":"deny"`, secrets.CodeArguments, secrets.CodeSession, `"arguments":[`,
		"(in an argument's name)", "; this session has also seen", "a secret,", "secret_seen:acme_key", "secret_seen:xy"} {
		if seen[want] == 0 {
			t.Errorf("no output holds %s: the cases miss it", want)
		}
	}
	for _, k := range []string{"aws_access_key", "aws_secret_key", "gcp_service_account", "azure_storage_key", "github_token",
		"slack_token", "slack_webhook", "private_key", "jwt", "stripe_key", "openai_key", "anthropic_key", "named_secret"} {
		if seen[secrets.LabelSeen+":"+k] == 0 {
			t.Errorf("no observe found %s", k)
		}
	}
	t.Logf("%d events over %d texts and %d configs", events, len(texts), len(configs))

	t.Run("bad configs", func(t *testing.T) {
		for _, cfg := range []any{
			map[string]any{"mode": "off"}, map[string]any{"mode": 1}, map[string]any{"strict": true},
			map[string]any{"allow": "x"}, map[string]any{"allow": []any{1}}, map[string]any{"allow": []string{""}},
			map[string]any{"allow": []string{strings.Repeat("x", 513)}}, map[string]any{"allow": manyTokens(257)},
			map[string]any{"disable": []string{"jwt", "nope\"\n"}}, map[string]any{"disable": true},
			map[string]any{"prefixes": "acme_"}, map[string]any{"prefixes": []any{"acme_"}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": "ab", "kind": "k"}}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": "a b_", "kind": "k"}}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": strings.Repeat("a", 33), "kind": "k"}}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": "abc", "kind": "K"}}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": "abc", "kind": ""}}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": "abc", "kind": "jwt"}}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": "abc", "kind": "k"}, map[string]any{"prefix": "abd", "kind": "k"}}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": "abc", "kind": "k", "min_length": 0}}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": "abc", "kind": "k", "min_length": 2.5}}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": "abc", "kind": "k", "min_length": "9"}}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": "abc", "kind": "k", "min_length": 1e9}}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": "abc", "kind": "k", "extra": 1}}},
			map[string]any{"prefixes": []any{map[string]any{"prefix": 5, "kind": "k"}}},
			map[string]any{"prefixes": manyPrefixes(17)},
		} {
			s := newSecretsTwins(t, host, cfg)
			if code, _ := s.check(t, "t", `{}`, true, nil); code != pdk.CodeBadConfig {
				t.Errorf("config %s: accepted", s.cfg)
			}
			s.close()
		}
		s := newSecretsTwins(t, host, map[string]any{"prefixes": manyPrefixes(16), "allow": manyTokens(256)})
		s.observe(t, "p15_"+strings.Repeat("z9", 20), nil)
		s.close()
	})
}

func manyTokens(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("tok%d", i)
	}
	return out
}

func manyPrefixes(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"prefix": fmt.Sprintf("p%d_", i), "kind": fmt.Sprintf("k%d", i)}
	}
	return out
}

// What the plugin says never holds the secret: not the reason, not the
// labels, not the flagged argument names, not the plugin log, for every
// generated secret passed as an argument to a tool that can exfiltrate,
// in a session that saw it first.
func TestSecretsNeverRepeatTheSecret(t *testing.T) {
	var log bytes.Buffer
	rt := newRuntime(t, Options{PoolSize: 1, Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx := context.Background()
	for _, mode := range []string{"ask", "deny"} {
		p, err := Load(ctx, rt, &config.Policy{Name: "secrets", Builtin: "secrets", TimeoutMs: 20000, Config: map[string]any{"mode": mode}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range fake.New(3).Samples(3) {
			res := p.Observe(ctx, &policy.ObserveInput{Session: "s", Tool: testTool, Arguments: []byte(`{}`), Result: s.Text})
			if !slicesContain(res.Labels, secrets.LabelSeen+":"+s.Kind) {
				t.Fatalf("observe of %s: labels %v", s.Kind, res.Labels)
			}
			args := `{"body":` + jsonRaw(s.Text) + `,` + jsonRaw(s.Token) + `:1}`
			c := checkInput(args, res.Labels...)
			v := p.Check(ctx, c)
			if v.Err != nil || v.Verdict.String() != mode || v.Remember {
				t.Fatalf("check of %s: %v %v remember=%v", s.Kind, v.Verdict, v.Err, v.Remember)
			}
			said := v.Reason + " " + strings.Join(v.Labels, " ") + " " + strings.Join(v.Arguments, " ") + " " + log.String()
			for _, part := range secretParts(s.Token) {
				if strings.Contains(said, part) {
					t.Fatalf("%s: the plugin repeated %q of the secret:\n%s", s.Kind, part, said)
				}
			}
			// A token that is a secret by its format alone is found in a
			// name too, and that name is not repeated.
			alone := s.Kind != "aws_secret_key" && s.Kind != "azure_storage_key" && s.Kind != "named_secret"
			if !strings.Contains(v.Reason, `("body")`) || alone != strings.Contains(v.Reason, "(in an argument's name)") {
				t.Errorf("%s: reason %q does not name the argument and the hidden name", s.Kind, v.Reason)
			}
		}
		p.Close()
	}
}

// secretParts are the pieces of a token a leak would show: the token and
// its 16-byte windows past a format's fixed prefix.
func secretParts(tok string) []string {
	out := []string{tok}
	for i := 12; i+16 <= len(tok); i += 8 {
		if p := tok[i : i+16]; !strings.Contains(p, "PRIVATE KEY") && !strings.Contains(p, "-----") {
			out = append(out, p)
		}
	}
	return out
}

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Inputs built to make a careless scanner quadratic (every position
// starting a candidate that runs to the end) are scanned in time linear in
// their size: 1 MiB of each within a 5 s deadline, which a quadratic scan
// (10^12 steps) could not meet on any machine. The benchmark below says
// what a MiB really costs.
func TestSecretsScanIsLinear(t *testing.T) {
	host := loadSecrets(t)
	s := newSecretsTwins(t, host, map[string]any{"prefixes": []any{map[string]any{"prefix": "aaa", "kind": "a"}}})
	defer s.close()
	const size = 1<<20 - 4<<10
	for _, unit := range []string{"a", "AKIA", "xoxb-", "eyJ.", "eyJa.", "=", ":", "password=", "token: ", "-----BEGIN ",
		"-----BEGIN PRIVATE KEY-----", "sk-", "sk-ant-", "ghp_", "github_pat_", "AccountKey=", "aaa", "hooks.slack.com/services/", "A"} {
		text := strings.Repeat(unit, size/len(unit))
		env := secretsObserveEnvelope(t, text)
		out, code, f := s.in.callWithin(context.Background(), EventObserve, env, 5*time.Second)
		if f != nil || code != pdk.CodeOK {
			t.Fatalf("%q × %d: %v %d %s", unit, size/len(unit), f, code, out)
		}
	}
}

// secretsObserveEnvelope is an observe envelope with the whole text, past
// the host's result cap (maxResultText), as a direct call sees it.
func secretsObserveEnvelope(t testing.TB, text string) []byte {
	b, err := json.Marshal(text)
	if err != nil {
		t.Fatal(err)
	}
	env := `{"abi":1,"event":"observe","session":{"id":"s","labels":[]},"call":{"capabilities":{"reads_private_data":true,` +
		`"sees_untrusted_content":false,"can_exfiltrate":false},"hints":{},"server":"fs","app":"fs","connector":"",` +
		`"tool":{"name":"read_file","title":"","definition_hash":"` + testTool.HashHex + `"},"arguments":{"path":"/repo/x"}},` +
		`"result":{"is_error":false,"text":` + string(b) + `},"time":"2026-05-01T12:00:00Z","plugin":{"name":"secrets","config":{}}}`
	return []byte(env)
}

// For any result text and any argument name, the module answers as the Go
// reference does. Run:
//
//	go test -run XXX -fuzz FuzzSecretsMatchesGo -fuzztime 3m ./internal/plugin/
func FuzzSecretsMatchesGo(f *testing.F) {
	for i, s := range fake.New(5).Samples(1) {
		f.Add(s.Text, []string{"body", "password", "", "/x"}[i%4], i%2 == 0)
	}
	for _, s := range []string{"", "password=Zz9Zz9Zz9Zz9Zz9Zz9", "eyJhbGciOi.eyJ.abcdefghijklmnopq", "\xff\xfe", `{"token": "aB3aB3aB3aB3aB3aB3"}`} {
		f.Add(s, "token", true)
	}
	host := loadSecrets(f)
	f.Fuzz(func(t *testing.T, text, name string, exfil bool) {
		s := newSecretsTwins(t, host, map[string]any{"prefixes": []any{map[string]any{"prefix": "acme_", "kind": "acme"}}})
		defer s.close()
		s.observe(t, text, nil)
		s.check(t, "t", `{`+jsonRaw(name)+`:`+jsonRaw(text)+`,"o":{`+jsonRaw(text)+`:[`+jsonRaw(text)+`]}}`, exfil, []string{secrets.LabelSeen})
	})
}

// BenchmarkSecretsObserve measures what scanning a result costs, per KiB,
// from 1 KiB to the largest text a 1 MiB input envelope holds (1023 KiB):
// the shipped module through a direct call (past the host's result cap,
// with its deadline armed) beside the Go reference run natively on the
// same envelope. Each size reports ns/KiB for both and the ratio
// (x-native). The text is ordinary: this package's source and the ABI
// document, on one line (so the envelope escapes nothing and the largest
// size fits).
func BenchmarkSecretsObserve(b *testing.B) {
	host := loadSecrets(b)
	var src strings.Builder
	for _, f := range []string{"../../pdk/ABI.md", "envelope.go", "instance.go", "plugin.go", "output.go", "pool.go"} {
		src.Write(readFile(b, f))
	}
	line := strings.NewReplacer("\n", " ", "\n", " ", "\t", " ", "\"", "'", "\\", "/", "<", "(", ">", ")", "&", "+").Replace(src.String())
	for _, kib := range []int{1, 4, 16, 64, 256, 1023} {
		text := strings.Repeat(line, kib<<10/len(line)+1)[:kib<<10]
		env := secretsObserveEnvelope(b, text)
		if len(env) > maxInput {
			b.Fatalf("%d KiB: envelope of %d bytes", kib, len(env))
		}
		b.Run(fmt.Sprintf("%dKiB", kib), func(b *testing.B) {
			s := newSecretsTwins(b, host, map[string]any{})
			defer s.close()
			if out := s.observe(b, text[:min(len(text), 16<<10)], nil); len(out) != 0 {
				b.Fatalf("ordinary text flagged: %s", out)
			}
			ctx := context.Background()
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, code, f := s.in.callWithin(ctx, EventObserve, env, 10*time.Second); f != nil || code != pdk.CodeOK {
					b.Fatal(f, code)
				}
			}
			b.StopTimer()
			wasm := b.Elapsed()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				s.ref.Handle(pdk.EventObserve, env)
			}
			native := time.Since(start)
			b.ReportMetric(float64(wasm.Nanoseconds())/float64(b.N)/float64(kib), "ns/KiB")
			b.ReportMetric(float64(native.Nanoseconds())/float64(b.N)/float64(kib), "native-ns/KiB")
			b.ReportMetric(float64(wasm)/float64(native), "x-native")
		})
	}
}
