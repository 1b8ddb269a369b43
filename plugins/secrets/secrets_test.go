package secrets

import (
	"encoding/json"
	"strings"
	"testing"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
	"github.com/toolwarden/toolwarden/plugins/secrets/fake"
)

// envelope builds a check or observe input as the host writes it.
func envelope(event string, cfg string, labels []string, exfil bool, args string, text string) []byte {
	l, _ := json.Marshal(labels)
	if labels == nil {
		l = []byte(`[]`)
	}
	t, _ := json.Marshal(text)
	caps := `{"reads_private_data":false,"sees_untrusted_content":false,"can_exfiltrate":` + map[bool]string{true: "true", false: "false"}[exfil] + `}`
	env := `{"abi":1,"event":"` + event + `","session":{"id":"s","labels":` + string(l) + `},"call":{"capabilities":` + caps +
		`,"hints":{},"server":"x","app":"x","connector":"","tool":{"name":"send_mail","title":"","definition_hash":"00"},"arguments":` + args + `}`
	if event == "observe" {
		env += `,"result":{"is_error":false,"text":` + string(t) + `}`
	}
	return []byte(env + `,"time":"2026-05-01T12:00:00Z","plugin":{"name":"secrets","config":` + cfg + `}}`)
}

func TestSecrets(t *testing.T) {
	g := fake.New(42)
	gh, aws, jwt, pemKey := g.GitHub(), g.AWSAccessKey(), g.JWT(), g.PrivateKey()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, c := range []struct {
		name   string
		event  uint32
		cfg    string
		labels []string
		exfil  bool
		args   string
		text   string
		want   string
	}{
		{name: "a result with a GitHub token marks the session with the token's kind", event: pdk.EventObserve,
			text: "cat .env\n" + gh.Text, want: `{"labels":["secret_seen","secret_seen:github_token"]}`},
		{name: "a result with several kinds marks each, in a fixed order", event: pdk.EventObserve,
			text: jwt.Text + "\n" + pemKey.Text + "\n" + aws.Text,
			want: `{"labels":["secret_seen","secret_seen:aws_access_key","secret_seen:private_key","secret_seen:jwt"]}`},
		{name: "a known format assigned to a secret-like name is reported as that format only", event: pdk.EventObserve,
			text: "GITHUB_TOKEN=" + gh.Token + "\n", want: `{"labels":["secret_seen","secret_seen:github_token"]}`},
		{name: "a secret spelled with JSON escapes in an argument is found", event: pdk.EventCheck, exfil: true,
			args: `{"body":"\u0041` + aws.Token[1:] + `"}`,
			want: `{"decision":"ask","code":"secret_in_arguments","reason":"the arguments (\"body\") carry what looks like an AWS access key id, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:aws_access_key"],"arguments":["body"]}`},
		{name: "an ordinary result adds nothing", event: pdk.EventObserve, text: "README.md: see docs/ for setup; commit 3f1c9a0e5b7d2c4f6a8e0b1d3c5e7f9a2b4c6d8e", want: ``},
		{name: "AWS's documented example key is not a secret", event: pdk.EventObserve,
			text: "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", want: ``},
		{name: "an allow-listed token is not a secret", event: pdk.EventObserve, cfg: `{"allow":[` + q(gh.Token) + `]}`, text: gh.Text, want: ``},
		{name: "a disabled kind is not looked for", event: pdk.EventObserve, cfg: `{"disable":["jwt"]}`, text: jwt.Text, want: ``},
		{name: "a configured prefix is a kind of its own", event: pdk.EventObserve,
			cfg:  `{"prefixes":[{"prefix":"acme_live_","kind":"acme_key","min_length":24}]}`,
			text: "ACME=acme_live_" + strings.Repeat("x1", 12), want: `{"labels":["secret_seen","secret_seen:acme_key"]}`},
		{name: "a configured prefix with too short a tail is not", event: pdk.EventObserve,
			cfg: `{"prefixes":[{"prefix":"acme_live_","kind":"acme_key","min_length":24}]}`, text: "acme_live_" + strings.Repeat("x", 23), want: ``},
		{name: "a call that cannot exfiltrate, with a secret in its arguments, marks the session and abstains", event: pdk.EventCheck,
			args: `{"path":"/tmp/creds","content":` + q(gh.Text) + `}`,
			want: `{"decision":"abstain","labels":["secret_seen","secret_seen:github_token"]}`},
		{name: "a call that can exfiltrate, with a secret in an argument, is asked about and names the argument", event: pdk.EventCheck,
			exfil: true, args: `{"to":"a@example.com","body":` + q("here: "+aws.Token) + `}`,
			want: `{"decision":"ask","code":"secret_in_arguments","reason":"the arguments (\"body\") carry what looks like an AWS access key id, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:aws_access_key"],"arguments":["body"]}`},
		{name: "with mode deny it is denied", event: pdk.EventCheck, cfg: `{"mode":"deny"}`,
			exfil: true, args: `{"body":` + q(aws.Token) + `}`,
			want: `{"decision":"deny","code":"secret_in_arguments","reason":"the arguments (\"body\") carry what looks like an AWS access key id, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:aws_access_key"],"arguments":["body"]}`},
		{name: "a secret deep in an argument flags the top-level argument", event: pdk.EventCheck,
			exfil: true, args: `{"opts":{"headers":[{"Authorization":` + q("Bearer "+jwt.Token) + `}]}}`,
			want: `{"decision":"ask","code":"secret_in_arguments","reason":"the arguments (\"opts\") carry what looks like a JSON Web Token, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:jwt"],"arguments":["opts"]}`},
		{name: "a member named like a secret with a high-entropy value is a secret", event: pdk.EventCheck,
			exfil: true, args: `{"config":{"db_password":"Xk9#mP2!vL8qR4wT"}}`,
			want: `{"decision":"ask","code":"secret_in_arguments","reason":"the arguments (\"config\") carry what looks like a high-entropy value named like a secret, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:named_secret"],"arguments":["config"]}`},
		{name: "an argument whose name is the secret is not named", event: pdk.EventCheck,
			exfil: true, args: `{` + q(gh.Token) + `:1}`,
			want: `{"decision":"ask","code":"secret_in_arguments","reason":"the arguments (in an argument's name) carry what looks like a GitHub token, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:github_token"]}`},
		{name: "an argument name starting with a slash is flagged as a JSON pointer", event: pdk.EventCheck,
			exfil: true, args: `{"/a~b":` + q(gh.Token) + `}`,
			want: `{"decision":"ask","code":"secret_in_arguments","reason":"the arguments (\"/~1a~0b\") carry what looks like a GitHub token, and \"send_mail\" can send data out","labels":["secret_seen","secret_seen:github_token"],"arguments":["/~1a~0b"]}`},
		{name: "a marked session asks before any call that can exfiltrate, naming what it saw", event: pdk.EventCheck,
			exfil: true, labels: []string{"secret_seen", "secret_seen:github_token", "secret_seen:private_key"}, args: `{"body":"hello"}`,
			want: `{"decision":"ask","code":"secret_in_session","reason":"this session has seen a GitHub token and a private key, and \"send_mail\" can send data out"}`},
		{name: "a session marked by a kind label alone is marked", event: pdk.EventCheck,
			exfil: true, labels: []string{"secret_seen:jwt"}, args: `{}`,
			want: `{"decision":"ask","code":"secret_in_session","reason":"this session has seen a JSON Web Token, and \"send_mail\" can send data out"}`},
		{name: "a marked session names a kind it does not know as a secret", event: pdk.EventCheck,
			exfil: true, labels: []string{"secret_seen", "secret_seen:other"}, args: `{}`,
			want: `{"decision":"ask","code":"secret_in_session","reason":"this session has seen a secret, and \"send_mail\" can send data out"}`},
		{name: "a marked session does not stop calls that cannot exfiltrate", event: pdk.EventCheck,
			labels: []string{"secret_seen"}, args: `{"body":"hello"}`, want: `{"decision":"abstain"}`},
		{name: "an unmarked session with clean arguments abstains", event: pdk.EventCheck,
			exfil: true, labels: []string{"secret_seenx", "private_data_seen"}, args: `{"body":"hello","n":42}`, want: `{"decision":"abstain"}`},
		{name: "a placeholder named like a secret is not a secret", event: pdk.EventCheck,
			exfil: true, args: `{"env":"API_KEY=${API_KEY}\nPASSWORD=your-password-here\ntoken: options.clientSecret"}`, want: `{"decision":"abstain"}`},
		{name: "an unknown config key refuses the config", event: pdk.EventCheck, cfg: `{"modes":"deny"}`,
			want: `modes: unknown key (secrets knows "mode", "allow", "disable" and "prefixes")`},
		{name: "an unknown kind refuses the config, listing the kinds", event: pdk.EventCheck, cfg: `{"disable":["jwts"]}`,
			want: `disable[0]: unknown kind "jwts" (kinds: aws_access_key, aws_secret_key, gcp_service_account, azure_storage_key, github_token, slack_token, slack_webhook, private_key, jwt, stripe_key, openai_key, anthropic_key, named_secret)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, args := c.cfg, c.args
			if cfg == "" {
				cfg = `{}`
			}
			if args == "" {
				args = `{}`
			}
			ev := map[uint32]string{pdk.EventCheck: "check", pdk.EventObserve: "observe"}[c.event]
			_, out := New().Handle(c.event, envelope(ev, cfg, c.labels, c.exfil, args, c.text))
			if string(out) != c.want {
				t.Errorf("got  %s\nwant %s", out, c.want)
			}
		})
	}
}

// Every label the plugin can add is a valid session label (pdk/ABI.md
// 5.3: [A-Za-z0-9_.:/-]{1,64}), and one observe adds at most 32.
func TestLabelsAreValid(t *testing.T) {
	c := testConfig(t, `{}`)
	for i := 0; i < maxPrefixes; i++ {
		if err := c.addPrefix("p", prefix{text: "pre" + string(rune('a'+i)), kind: strings.Repeat("k", 30) + string(rune('a'+i)) + "z", min: 1}); err != nil {
			t.Fatal(err)
		}
	}
	labels := c.labels(1<<(int(builtinKinds)+maxPrefixes) - 1)
	if len(labels) > 32 {
		t.Fatalf("%d labels", len(labels))
	}
	for _, l := range labels {
		if len(l) == 0 || len(l) > 64 || strings.Trim(l, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:/-") != "" {
			t.Errorf("label %q is not valid", l)
		}
	}
}
