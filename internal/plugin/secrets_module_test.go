package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/fakesecrets"
	"github.com/toolwarden/toolwarden/internal/policy"
	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// Tests of the shipped secrets module (Rust, plugins/secrets/rust) with
// secrets generated at test time (internal/fakesecrets): nothing
// secret-shaped is committed, so these cannot be case files. What the
// module answers on committed text is in plugins/secrets/cases (run by
// go test ./plugins); its detection rates over this repository and the
// npm corpus are plugins/secrets_corpus_test.go.

const labelSeen = "secret_seen"

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

// secretsEnvelope builds a check or observe input as the host writes it.
func secretsEnvelope(event string, cfg string, labels []string, exfil bool, args string, text string) []byte {
	l, _ := json.Marshal(labels)
	if labels == nil {
		l = []byte(`[]`)
	}
	t, _ := json.Marshal(text)
	caps := `{"reads_private_data":false,"sees_untrusted_content":false,"can_exfiltrate":` + fmt.Sprint(exfil) + `}`
	env := `{"abi":1,"event":"` + event + `","session":{"id":"s","labels":` + string(l) + `},"call":{"capabilities":` + caps +
		`,"hints":{},"server":"x","app":"x","connector":"","tool":{"name":"send_mail","title":"","definition_hash":"00"},"arguments":` + args + `}`
	if event == "observe" {
		env += `,"result":{"is_error":false,"text":` + string(t) + `}`
	}
	return []byte(env + `,"time":"2026-05-01T12:00:00Z","plugin":{"name":"secrets","config":` + cfg + `}}`)
}

// The secrets plugin's named cases that need a real format's token, with
// the module's exact output (the rest are plugins/secrets/cases/named.json).
func TestSecretsFindsGeneratedSecrets(t *testing.T) {
	host := loadSecrets(t)
	g := fakesecrets.New(42)
	gh, aws, jwt, pemKey := g.GitHub(), g.AWSAccessKey(), g.JWT(), g.PrivateKey()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, c := range []struct {
		name   string
		event  Event
		cfg    string
		labels []string
		exfil  bool
		args   string
		text   string
		want   string
	}{
		{name: "a result with a GitHub token marks the session with the token's kind", event: EventObserve,
			text: "cat .env\n" + gh.Text, want: `{"labels":["secret_seen","secret_seen:github_token"]}`},
		{name: "a result with several kinds marks each, in a fixed order", event: EventObserve,
			text: jwt.Text + "\n" + pemKey.Text + "\n" + aws.Text,
			want: `{"labels":["secret_seen","secret_seen:aws_access_key","secret_seen:private_key","secret_seen:jwt"]}`},
		{name: "a known format assigned to a secret-like name is reported as that format only", event: EventObserve,
			text: "GITHUB_TOKEN=" + gh.Token + "\n", want: `{"labels":["secret_seen","secret_seen:github_token"]}`},
		{name: "a secret spelled with JSON escapes in an argument is found", event: EventCheck, exfil: true,
			args: `{"body":"\u0041` + aws.Token[1:] + `"}`,
			want: `{"decision":"ask","code":"secret_in_arguments","reason":"the arguments (\"body\") carry what looks like an AWS access key id, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:aws_access_key"],"arguments":["body"]}`},
		{name: "an allow-listed token is not a secret", event: EventObserve, cfg: `{"allow":[` + q(gh.Token) + `]}`, text: gh.Text, want: ``},
		{name: "a disabled kind is not looked for", event: EventObserve, cfg: `{"disable":["jwt"]}`, text: jwt.Text, want: ``},
		{name: "a call that cannot exfiltrate, with a secret in its arguments, marks the session and abstains", event: EventCheck,
			args: `{"path":"/tmp/creds","content":` + q(gh.Text) + `}`,
			want: `{"decision":"abstain","labels":["secret_seen","secret_seen:github_token"]}`},
		{name: "a call that can exfiltrate, with a secret in an argument, is asked about and names the argument", event: EventCheck,
			exfil: true, args: `{"to":"a@example.com","body":` + q("here: "+aws.Token) + `}`,
			want: `{"decision":"ask","code":"secret_in_arguments","reason":"the arguments (\"body\") carry what looks like an AWS access key id, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:aws_access_key"],"arguments":["body"]}`},
		{name: "with mode deny it is denied", event: EventCheck, cfg: `{"mode":"deny"}`,
			exfil: true, args: `{"body":` + q(aws.Token) + `}`,
			want: `{"decision":"deny","code":"secret_in_arguments","reason":"the arguments (\"body\") carry what looks like an AWS access key id, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:aws_access_key"],"arguments":["body"]}`},
		{name: "a secret deep in an argument flags the top-level argument", event: EventCheck,
			exfil: true, args: `{"opts":{"headers":[{"Authorization":` + q("Bearer "+jwt.Token) + `}]}}`,
			want: `{"decision":"ask","code":"secret_in_arguments","reason":"the arguments (\"opts\") carry what looks like a JSON Web Token, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:jwt"],"arguments":["opts"]}`},
		{name: "an argument whose name is the secret is not named", event: EventCheck,
			exfil: true, args: `{` + q(gh.Token) + `:1}`,
			want: `{"decision":"ask","code":"secret_in_arguments","reason":"the arguments (in an argument's name) carry what looks like a GitHub token, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:github_token"]}`},
		{name: "an argument name starting with a slash is flagged as a JSON pointer", event: EventCheck,
			exfil: true, args: `{"/a~b":` + q(gh.Token) + `}`,
			want: `{"decision":"ask","code":"secret_in_arguments","reason":"the arguments (\"/~1a~0b\") carry what looks like a GitHub token, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:github_token"],"arguments":["/~1a~0b"]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, args := c.cfg, c.args
			if cfg == "" {
				cfg = `{}`
			}
			if args == "" {
				args = `{}`
			}
			s := newBuiltinConfig(t, host, "secrets", json.RawMessage(cfg))
			defer s.close()
			ev := map[Event]string{EventCheck: "check", EventObserve: "observe"}[c.event]
			if _, out := s.run(t, c.event, secretsEnvelope(ev, cfg, c.labels, c.exfil, args, c.text)); string(out) != c.want {
				t.Errorf("got  %s\nwant %s", out, c.want)
			}
		})
	}
}

// secretShapes put a JSON string where arguments may hold it: a top-level
// value, deep in objects and arrays, among other values.
var secretShapes = []string{`{"body":%s}`, `{"a":1,"opts":{"headers":[{"x":%s}]}}`, `{"list":["x",%s,3]}`,
	`{"deep":[[[[{"k":[%s]}]]]],"n":null}`, `{"x":"y","z":{"":%s}}`}

// jsonSpelling writes s as a JSON string in one of several legal ways:
// as encoding/json does, with every '/' escaped, with every character
// escaped as \uXXXX (surrogate pairs beyond the BMP), or every other one.
func jsonSpelling(s string, how int) string {
	if how == 0 {
		b, _ := json.Marshal(s)
		return string(b)
	}
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range []rune(s) {
		switch {
		case how == 1 && r == '/':
			b.WriteString(`\/`)
		case how == 2 || how == 3 && i%2 == 0 || r < 0x20 || r == '"' || r == '\\':
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// secretFoundAnywhere checks one generated secret: observed in a result
// between other lines, and passed in an argument of any shape, spelled in
// any legal JSON way, to a tool that can send data out, it is found as its
// kind, the call is asked about (mode ask), and nothing the plugin says
// repeats it.
func secretFoundAnywhere(t testing.TB, s *builtinConfig, smp fakesecrets.Sample, shape, how int) {
	t.Helper()
	_, out := s.run(t, EventObserve, secretsEnvelope("observe", `{}`, nil, false, `{}`, "line one\n"+smp.Text+"\nlast line"))
	if want := `"` + labelSeen + ":" + smp.Kind + `"`; !bytes.Contains(out, []byte(want)) {
		t.Fatalf("observe of %s: %s", smp.Kind, out)
	}
	args := fmt.Sprintf(secretShapes[shape%len(secretShapes)], jsonSpelling(smp.Text, how%4))
	_, out = s.run(t, EventCheck, secretsEnvelope("check", `{}`, nil, true, args, ""))
	v, err := parseCheck(out)
	if err != nil || v.Verdict != policy.Ask || v.Code != "secret_in_arguments" || !slicesContain(v.Labels, labelSeen+":"+smp.Kind) {
		t.Fatalf("%s in %s: %+v %v", smp.Kind, args, v, err)
	}
	for _, part := range secretParts(smp.Token) {
		if bytes.Contains(out, []byte(part)) {
			t.Fatalf("%s: the plugin repeated %q of the secret: %s", smp.Kind, part, out)
		}
	}
}

// Generated secrets of every kind are found in every argument shape and
// JSON spelling (and in results), and never repeated.
func TestSecretsFoundAnywhere(t *testing.T) {
	host := loadSecrets(t)
	s := newBuiltinConfig(t, host, "secrets", map[string]any{})
	defer s.close()
	for i, smp := range fakesecrets.New(7).Samples(4) {
		for shape := range secretShapes {
			secretFoundAnywhere(t, s, smp, shape, i+shape)
		}
	}
}

// The same for any seed, shape and spelling. Run:
//
//	go test -run XXX -fuzz FuzzSecretsFoundAnywhere -fuzztime 3m ./internal/plugin/
func FuzzSecretsFoundAnywhere(f *testing.F) {
	for i := 0; i < 13; i++ {
		f.Add(uint64(i), uint8(i), uint8(i), uint8(i))
	}
	host := loadSecrets(f)
	f.Fuzz(func(t *testing.T, seed uint64, kind, shape, how uint8) {
		s := newBuiltinConfig(t, host, "secrets", map[string]any{})
		defer s.close()
		samples := fakesecrets.New(seed).Samples(1)
		secretFoundAnywhere(t, s, samples[int(kind)%len(samples)], int(shape), int(how))
	})
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
		for _, s := range fakesecrets.New(3).Samples(3) {
			res := p.Observe(ctx, &policy.ObserveInput{Session: "s", Tool: testTool, Arguments: []byte(`{}`), Result: s.Text})
			if !slicesContain(res.Labels, labelSeen+":"+s.Kind) {
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
	s := newBuiltinConfig(t, host, "secrets", map[string]any{"prefixes": []any{map[string]any{"prefix": "aaa", "kind": "a"}}})
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

// BenchmarkSecretsObserve measures what scanning a result costs, per KiB,
// from 1 KiB to the largest text a 1 MiB input envelope holds (1023 KiB):
// the shipped module through a direct call (past the host's result cap,
// with its deadline armed). The text is ordinary: this package's source
// and the ABI document, on one line (so the envelope escapes nothing and
// the largest size fits). What the guest's scan costs against a C guest
// reading the same bytes is BenchmarkGuestRatios.
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
			s := newBuiltinConfig(b, host, "secrets", map[string]any{})
			defer s.close()
			if _, out := s.run(b, EventObserve, secretsObserveEnvelope(b, text[:min(len(text), 16<<10)])); len(out) != 0 {
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
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(kib), "ns/KiB")
		})
	}
}
