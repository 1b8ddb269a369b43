package host_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/fakesecrets"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// The secrets plugin sees the result text the host passes to observe: the
// first 4 KiB by default (host.Settings.WithResultLimit), never more than
// the envelope's 16 KiB. A key inside that window marks the session; the
// same key after it is not seen (the gap docs/plugins.md states), until
// the host is given a larger limit or the policy its own result_limit_kb.
func TestSecretsSeeTheResultTheHostPasses(t *testing.T) {
	t.Parallel()
	tok := fakesecrets.New(5).GitHub().Token
	padding := strings.Repeat("ordinary line of a long file\n", 200) // 5800 bytes
	read := tool(t, `{"name":"read_file","annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
	send := tool(t, `{"name":"send_email","annotations":{"destructiveHint":false,"openWorldHint":true}}`)
	const cfg = `
[policies.secrets]
builtin = "secrets"
config = { mode = "deny" }
`
	// The policy's own result_limit_kb: this plugin sees more of a result
	// than the host's default cut, and more than the old 16 KiB window.
	const cfgWide = cfg + "result_limit_kb = 512\n"
	far := strings.Repeat(padding, 40) // 232 KB
	for _, c := range []struct {
		name   string
		limit  int
		text   string
		marked bool
		cfg    string
	}{
		{"a key at the start of a result marks the session", 0, "GITHUB_TOKEN=" + tok + "\n" + padding, true, ""},
		{"a key past the default 4 KiB is not seen", 0, padding + "GITHUB_TOKEN=" + tok + "\n", false, ""},
		{"a key past 4 KiB is seen with a 16 KiB limit", 16 << 10, padding + "GITHUB_TOKEN=" + tok + "\n", true, ""},
		{"a key 232 KB in is seen with result_limit_kb = 512", 0, far + "GITHUB_TOKEN=" + tok + "\n", true, cfgWide},
		{"a key 232 KB in is not seen without it", 0, far + "GITHUB_TOKEN=" + tok + "\n", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := host.Defaults().WithPluginCacheDir(pluginCache)
			if c.limit > 0 {
				s = s.WithResultLimit(c.limit)
			}
			conf := cfg
			if c.cfg != "" {
				conf = c.cfg
			}
			h := testhost.New(t, conf, s)
			ctx := context.Background()
			call := host.Call{Session: "s", Server: "fs", Tool: read}
			d := h.Check(ctx, call)
			h.Observe(ctx, call, &d, host.Result{Text: c.text})
			if got := h.Session("s").HasLabel("secret_seen:github_token"); got != c.marked {
				t.Fatalf("marked = %v, want %v (labels %v)", got, c.marked, h.Session("s").Labels())
			}
			d = h.Check(ctx, host.Call{Session: "s", Server: "mail", Tool: send})
			if c.marked != (d.Decision == host.Deny) {
				t.Fatalf("send_email after the read: %s %+v", d.Decision, d.Reasons)
			}
			for _, r := range d.Reasons {
				if strings.Contains(r.Message, tok[4:]) {
					t.Fatalf("the reason repeats the secret: %q", r.Message)
				}
			}
		})
	}
}
