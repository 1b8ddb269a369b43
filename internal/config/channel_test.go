package config

import (
	"errors"
	"strings"
	"testing"
)

// TestApprovalChannelTheMostSpecificSettingWins resolves approval_channel
// for calls of several servers and apps against one config that sets it at
// every level.
func TestApprovalChannelTheMostSpecificSettingWins(t *testing.T) {
	t.Parallel()
	cfg, err := LoadBytes("config.toml", []byte(`
approval_channel = "none"

[apps._default]
approval_channel = "inbox"

[apps.docs]
approval_channel = "both"

[apps.connector_mail]
approval_channel = "none"

[mcp_servers.fs]
command = "fs"
approval_channel = "elicitation"

[mcp_servers.docs]
command = "docs"

[mcp_servers.hub]
command = "hub"
connectors = true
`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, server, app string
		want              Channel
		path, at          string
	}{
		{"a server's own setting beats _default", "fs", "fs", ChannelElicitation, "mcp_servers.fs.approval_channel", "config.toml:15:1"},
		{"an app's setting applies to the server of that name", "docs", "docs", ChannelBoth, "apps.docs.approval_channel", "config.toml:8:1"},
		{"a connector's app beats its server", "hub", "connector_mail", ChannelNone, "apps.connector_mail.approval_channel", "config.toml:11:1"},
		{"a server that sets nothing falls back to _default", "hub", "hub", ChannelInbox, "apps._default.approval_channel", "config.toml:5:1"},
		{"an unknown server falls back to _default too", "other", "", ChannelInbox, "apps._default.approval_channel", "config.toml:5:1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := cfg.ApprovalChannel(c.server, c.app)
			if got.Value != c.want || got.Path != c.path || got.Pos.String() != c.at || got.Required {
				t.Errorf("got %+v, want %s from %s at %s", got, c.want, c.path, c.at)
			}
		})
	}
}

func TestApprovalChannelDefaultsToElicitationAndTheTopLevelAppliesBelowEverything(t *testing.T) {
	t.Parallel()
	cfg, err := LoadBytes("config.toml", []byte("[mcp_servers.fs]\ncommand = \"fs\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.ApprovalChannel("fs", "fs")
	if got.Effective() != ChannelElicitation || got.Path != "" {
		t.Errorf("unset: got %+v, want the elicitation default", got)
	}
	if w := got.Where(); w != `approval_channel = "elicitation" (the default)` {
		t.Errorf("Where = %q", w)
	}
	if !Default().ApprovalChannel("x", "x").Effective().Elicits() {
		t.Error("the embedded default does not elicit")
	}
	cfg, err = LoadBytes("config.toml", []byte("approval_channel = \"none\"\n[mcp_servers.fs]\ncommand = \"fs\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	got = cfg.ApprovalChannel("fs", "fs")
	if got.Value != ChannelNone || got.Where() != `approval_channel = "none" at config.toml:1:1` {
		t.Errorf("top level: got %+v (%s)", got, got.Where())
	}
}

func TestChannelKindsSayWhichChannelsTheyUse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		ch            Channel
		elicits, inbx bool
	}{
		{ChannelUnset, true, false},
		{ChannelElicitation, true, false},
		{ChannelInbox, false, true},
		{ChannelBoth, true, true},
		{ChannelNone, false, false},
	}
	for _, c := range cases {
		if c.ch.Elicits() != c.elicits || c.ch.Inbox() != c.inbx {
			t.Errorf("%q: Elicits %v Inbox %v, want %v %v", c.ch, c.ch.Elicits(), c.ch.Inbox(), c.elicits, c.inbx)
		}
	}
}

// TestChannelSettingsRefuseWhatIsWrongWithWhereAndAFix loads malformed
// channel and webhook settings: each is an error at the key, saying what
// to write instead.
func TestChannelSettingsRefuseWhatIsWrongWithWhereAndAFix(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, toml, want string
	}{
		{"a misspelt channel suggests the right one", "approval_channel = \"inbx\"\n",
			`config.toml:1:1: approval_channel: unknown approval channel "inbx" (did you mean "inbox"?); want "elicitation", "inbox", "both" or "none"`},
		{"a channel of the wrong type says which values it takes", "[apps._default]\napproval_channel = true\n",
			`config.toml:2:1: apps._default.approval_channel: expected a string ("elicitation", "inbox", "both" or "none"), got boolean true`},
		{"a bad channel in an app table is found there", "[apps.github]\napproval_channel = \"email\"\n",
			`config.toml:2:1: apps.github.approval_channel: unknown approval channel "email"`},
		{"a bad channel in a server table is found there", "[mcp_servers.fs]\ncommand = \"x\"\napproval_channel = \"Both\"\n",
			`config.toml:3:1: mcp_servers.fs.approval_channel: unknown approval channel "Both" (did you mean "both"?)`},
		{"a literal webhook secret is refused with where to put it", "[webhook]\nurl = \"https://h.example/x\"\nsecret = \"hunter2hunter2\"\n",
			`config.toml:3:1: webhook.secret: a secret in a config file leaks (configs are shared, copied and committed): put it in an environment variable and write secret_env = "VAR_NAME"`},
		{"a webhook without secret_env is refused: posts are always signed", "[webhook]\nurl = \"https://h.example/x\"\n",
			`config.toml:1:2: webhook: missing required key "secret_env"`},
		{"a webhook without url is refused", "[webhook]\nsecret_env = \"S\"\n",
			`config.toml:1:2: webhook: missing required key "url"`},
		{"a secret pasted into secret_env is refused", "[webhook]\nurl = \"https://h.example/x\"\nsecret_env = \"5f2b-9c1e-77aa-41d0-bb01\"\n",
			`config.toml:3:1: webhook.secret_env: "5f2b-9c1e-77aa-41d0-bb01" is not an environment variable name (this looks like a secret itself: keep it out of the file)`},
		{"a relative webhook URL is refused", "[webhook]\nurl = \"/hook\"\nsecret_env = \"S\"\n",
			`config.toml:2:1: webhook.url: invalid URL "/hook": want an absolute http:// or https:// URL`},
		{"a webhook URL with credentials is refused", "[webhook]\nurl = \"https://u:pw@h.example/x\"\nsecret_env = \"S\"\n",
			`config.toml:2:1: webhook.url: URL "https://u:xxxxx@h.example/x" has credentials in it`},
		{"an unknown webhook event suggests the right one", "[webhook]\nurl = \"https://h.example/x\"\nsecret_env = \"S\"\nevents = [\"asks\"]\n",
			`config.toml:4:11: webhook.events[0]: unknown webhook event "asks" (did you mean "ask"?)`},
		{"a webhook timeout beyond a minute is refused", "[webhook]\nurl = \"https://h.example/x\"\nsecret_env = \"S\"\ntimeout_sec = 600\n",
			`config.toml:4:1: webhook.timeout_sec: expected 0 < timeout_sec <= 60`},
		{"a misspelt webhook key suggests the right one", "[webhook]\nurl = \"https://h.example/x\"\nsecret_env = \"S\"\ntimeout = 3\n",
			`config.toml:4:1: webhook: unknown key "timeout" (did you mean "timeout_sec"?)`},
		{"webhook must be a table", "webhook = \"https://h.example/x\"\n",
			`config.toml:1:1: webhook: expected a table, got string`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadBytes("config.toml", []byte(c.toml))
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("loaded (err %v), want an error", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, c.want)
			}
		})
	}
}

func TestAWebhookLoadsWithItsSettingsAndEventDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := LoadBytes("config.toml", []byte(`
[webhook]
url = "https://ntfy.example/toolwarden"
secret_env = "TW_SECRET"
timeout_sec = 2.5
events = ["ask", "answer"]
`))
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.Webhook
	if w == nil || w.URL != "https://ntfy.example/toolwarden" || w.SecretEnv != "TW_SECRET" || w.WebhookTimeoutSec() != 2.5 || !w.Sends("answer") || !w.Sends("ask") {
		t.Fatalf("webhook = %+v", w)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %v", cfg.Warnings)
	}
	bare := &Webhook{}
	if !bare.Sends("ask") || bare.Sends("answer") || bare.WebhookTimeoutSec() != DefaultWebhookTimeoutSec {
		t.Error("a webhook without events or timeout does not send asks only, within the default timeout")
	}
	var none *Webhook
	if none.Sends("ask") {
		t.Error("no webhook sends")
	}
}

func TestChannelSettingsThatMisleadLoadWithAWarning(t *testing.T) {
	t.Parallel()
	cfg, err := LoadBytes("config.toml", []byte(`
[webhook]
url = "http://phone.example/hook"
secret_env = "S"

[apps.fs]
approval_channel = "inbox"

[mcp_servers.fs]
command = "fs"
approval_channel = "none"
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range cfg.Warnings {
		got = append(got, w.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`warning: config.toml:3:1: webhook.url: posts asks, with their arguments, unencrypted to phone.example`,
		`warning: config.toml:11:1: mcp_servers.fs.approval_channel: server "fs"'s approval_channel "none" is not used: [apps.fs] sets "inbox"`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings:\n%s\nwant:\n%s", all, want)
		}
	}
	local, err := LoadBytes("config.toml", []byte("[webhook]\nurl = \"http://127.0.0.1:9/x\"\nsecret_env = \"S\"\n"))
	if err != nil || len(local.Warnings) != 0 {
		t.Errorf("a loopback http receiver: err %v, warnings %v; want none", err, local.Warnings)
	}
}

// TestRequirementsPinApprovalChannel: an admin's approval_channel holds
// against every user level and says where it was required.
func TestRequirementsPinApprovalChannel(t *testing.T) {
	t.Parallel()
	user := []byte(`
approval_channel = "none"

[apps._default]
approval_channel = "elicitation"

[apps.github]
approval_channel = "none"

[mcp_servers.fs]
command = "fs"
approval_channel = "elicitation"
`)
	cases := []struct {
		name, reqs string
		check      func(t *testing.T, c *Config)
	}{
		{
			name: "a top-level pin replaces every user level and lists each replaced key",
			reqs: "approval_channel = \"inbox\"\n",
			check: func(t *testing.T, c *Config) {
				for _, sa := range [][2]string{{"fs", "fs"}, {"github", "github"}, {"other", "other"}} {
					got := c.ApprovalChannel(sa[0], sa[1])
					if got.Value != ChannelInbox || !got.Required || got.Where() != `approval_channel = "inbox" required by admin.toml:1:1` {
						t.Errorf("%s: got %+v (%s)", sa[0], got, got.Where())
					}
				}
				var paths []string
				for _, o := range c.Overrides {
					paths = append(paths, o.Path)
				}
				want := "approval_channel apps._default.approval_channel apps.github.approval_channel mcp_servers.fs.approval_channel"
				if strings.Join(paths, " ") != want {
					t.Errorf("overrides %v, want %s", paths, want)
				}
				if at, ok := c.RequiredBy("approval_channel"); !ok || at.String() != "admin.toml:1:1" {
					t.Errorf("RequiredBy = %v %v", at, ok)
				}
				if s := c.Overrides[0].String(); !strings.Contains(s, `config.toml:2:1: approval_channel: approval channel "none" replaced by "inbox" (required by admin.toml:1:1)`) {
					t.Errorf("override reads %q", s)
				}
			},
		},
		{
			name: "an app pin holds for that app only, beating the top-level pin",
			reqs: "approval_channel = \"both\"\n[apps.fs]\napproval_channel = \"none\"\n",
			check: func(t *testing.T, c *Config) {
				if got := c.ApprovalChannel("fs", "fs"); got.Value != ChannelNone || got.Where() != `apps.fs.approval_channel = "none" required by admin.toml:3:1` {
					t.Errorf("fs: %+v (%s)", got, got.Where())
				}
				if got := c.ApprovalChannel("github", "github"); got.Value != ChannelBoth {
					t.Errorf("github: %+v", got)
				}
			},
		},
		{
			name: "a pin equal to the user's value overrides nothing",
			reqs: "[apps.github]\napproval_channel = \"none\"\n",
			check: func(t *testing.T, c *Config) {
				if len(c.Overrides) != 0 {
					t.Errorf("overrides %v", c.Overrides)
				}
				if got := c.ApprovalChannel("fs", "fs"); got.Value != ChannelElicitation || got.Required {
					t.Errorf("fs is not the user's: %+v", got)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := LoadBytes("config.toml", user)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ParseRequirements("admin.toml", []byte(c.reqs))
			if err != nil {
				t.Fatal(err)
			}
			got, err := cfg.ApplyRequirements(r)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, got)
			if cfg.ApprovalChannel("fs", "fs").Required {
				t.Error("ApplyRequirements changed the config it copied")
			}
		})
	}
}

func TestARequirementsFileRefusesAMalformedChannel(t *testing.T) {
	t.Parallel()
	_, err := ParseRequirements("admin.toml", []byte("approval_channel = \"nope\"\n"))
	if err == nil || !strings.Contains(err.Error(), `admin.toml:1:1: approval_channel: unknown approval channel "nope"`) {
		t.Errorf("err = %v", err)
	}
}
