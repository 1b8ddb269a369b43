package config

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// This file holds toolwarden's approval channel settings: approval_channel
// (where an ask is put to a human) at the top level, in [apps._default],
// [apps.<id>] and [mcp_servers.<name>], and the [webhook] table that
// notifies of asks. Codex has neither; both are toolwarden additions.

// Channel is an approval_channel value: where asks go.
type Channel string

const (
	ChannelUnset Channel = ""
	// ChannelElicitation asks through MCP elicitation (the default).
	ChannelElicitation Channel = "elicitation"
	// ChannelInbox posts the ask to the local approval inbox.
	ChannelInbox Channel = "inbox"
	// ChannelBoth does both; the first answer wins.
	ChannelBoth Channel = "both"
	// ChannelNone asks nobody: every ask is a deny.
	ChannelNone Channel = "none"
)

// ChannelNames are the values approval_channel takes.
var ChannelNames = []string{string(ChannelElicitation), string(ChannelInbox), string(ChannelBoth), string(ChannelNone)}

// Elicits reports whether the channel asks through MCP elicitation.
func (c Channel) Elicits() bool {
	return c == ChannelElicitation || c == ChannelBoth || c == ChannelUnset
}

// Inbox reports whether the channel posts asks to the inbox.
func (c Channel) Inbox() bool { return c == ChannelInbox || c == ChannelBoth }

// ChannelSetting is the approval_channel that applies to a call, and
// where it was decided: the key path and its position (Required when a
// requirements file pinned it). The zero Path means nobody set it.
type ChannelSetting struct {
	Value    Channel
	Path     string
	Pos      Position
	Required bool
}

// Where says where the setting came from, for messages:
// `approval_channel = "none" at config.toml:3:1`, or "required by ...".
func (s ChannelSetting) Where() string {
	if s.Path == "" {
		return fmt.Sprintf("approval_channel = %s (the default)", quote(string(s.effective())))
	}
	verb := "at"
	if s.Required {
		verb = "required by"
	}
	return fmt.Sprintf("%s = %s %s %s", s.Path, quote(string(s.Value)), verb, s.Pos)
}

func (s ChannelSetting) effective() Channel {
	if s.Value == ChannelUnset {
		return ChannelElicitation
	}
	return s.Value
}

// Effective is the channel, with the default (elicitation) for unset.
func (s ChannelSetting) Effective() Channel { return s.effective() }

// ApprovalChannel resolves the channel for a call to tool of server, whose
// app is app (the server's name, or a connector id): a requirement's pin
// for the app, then one for every app; else the most specific setting of
// [apps.<app>], [mcp_servers.<server>], [apps._default], the top level;
// else elicitation.
func (c *Config) ApprovalChannel(server, app string) ChannelSetting {
	if app == "" {
		app = server
	}
	if p, ok := c.channelPins[app]; ok {
		return p
	}
	if p, ok := c.channelPins[""]; ok {
		return p
	}
	if a := c.Apps[app]; a != nil && a.ApprovalChannel.Value != ChannelUnset {
		return a.ApprovalChannel
	}
	if s := c.Servers[server]; s != nil && s.ApprovalChannel.Value != ChannelUnset {
		return s.ApprovalChannel
	}
	if c.Default.ApprovalChannel.Value != ChannelUnset {
		return c.Default.ApprovalChannel
	}
	if c.Channel.Value != ChannelUnset {
		return c.Channel
	}
	return ChannelSetting{Value: ChannelElicitation}
}

// approvalChannel reads an approval_channel value at path.
func (l *loader) approvalChannel(path string, v any) ChannelSetting {
	ch := Channel(l.enum(path, v, "approval channel", ChannelNames...))
	if ch == ChannelUnset {
		return ChannelSetting{}
	}
	return ChannelSetting{Value: ch, Path: path, Pos: l.pos(path)}
}

// Webhook is the [webhook] table: where asks are announced. The secret
// that signs each post is read from the environment variable SecretEnv at
// send time; the file never holds it.
type Webhook struct {
	URL       string
	SecretEnv string
	// Events are the events posted: "ask" (a new ask) and "answer" (an ask
	// was answered, withdrawn or expired). Default: ["ask"].
	Events []string
	// TimeoutSec bounds each post; nil: DefaultWebhookTimeoutSec.
	TimeoutSec *float64
	Pos        Position
}

// WebhookEvents are the events a webhook may be sent.
var WebhookEvents = []string{"ask", "answer"}

// DefaultWebhookTimeoutSec bounds a webhook post when timeout_sec is unset.
const DefaultWebhookTimeoutSec = 5

// maxWebhookTimeoutSec keeps a slow receiver from holding a hook process.
const maxWebhookTimeoutSec = 60

// Sends reports whether the webhook posts event.
func (w *Webhook) Sends(event string) bool {
	if w == nil {
		return false
	}
	if w.Events == nil {
		return event == "ask"
	}
	return slices.Contains(w.Events, event)
}

// envName is what a variable name may look like (POSIX, upper or lower).
// isEnvName matches ^[A-Za-z_][A-Za-z0-9_]*$ (no regexp compiled at
// start: every hook process loads this package).
func isEnvName(s string) bool {
	return s != "" && !(s[0] >= '0' && s[0] <= '9') && onlyBytes(s, "_")
}

// webhook reads [webhook].
func (l *loader) webhook(p string, v any) *Webhook {
	w := &Webhook{}
	w.Pos, _ = l.firstPos(p)
	t, ok := l.table(p, v, fields{
		"url":        func(p string, v any) { w.URL = l.webhookURL(p, v) },
		"secret_env": func(p string, v any) { w.SecretEnv = l.secretEnv(p, v) },
		"secret": func(p string, v any) {
			l.errorf(p, "a secret in a config file leaks (configs are shared, copied and committed): put it in an environment variable and write secret_env = \"VAR_NAME\"")
		},
		"events": func(p string, v any) { w.Events = l.enumList(p, v, "webhook event", WebhookEvents...) },
		"timeout_sec": func(p string, v any) {
			s := l.seconds(p, v)
			if s != nil && (*s == 0 || *s > maxWebhookTimeoutSec) {
				l.errorf(p, "expected 0 < timeout_sec <= %d (seconds one post may take), got %s", maxWebhookTimeoutSec, describe(v))
				return
			}
			w.TimeoutSec = s
		},
	})
	if !ok {
		return nil
	}
	if _, has := t["url"]; !has {
		l.errorf(p, `missing required key "url": set url = "https://..." (where asks are posted), or remove [webhook]`)
	}
	if _, has := t["secret_env"]; !has {
		if _, literal := t["secret"]; !literal {
			l.errorf(p, `missing required key "secret_env": every post is signed so the receiver can tell it from a forgery; set secret_env = "VAR_NAME", the environment variable that holds the secret`)
		}
	}
	return w
}

// webhookURL reads an absolute http(s) URL without credentials in it.
func (l *loader) webhookURL(p string, v any) string {
	s := l.str(p, v)
	if s == "" {
		if _, ok := v.(string); ok {
			l.errorf(p, `empty URL: set url = "https://..."`)
		}
		return ""
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		l.errorf(p, "invalid URL %s: %v", quote(s), err)
		return ""
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		l.errorf(p, "invalid URL %s: want an absolute http:// or https:// URL", quote(s))
		return ""
	case u.User != nil:
		l.errorf(p, "URL %s has credentials in it, which leak with the file: drop them (the post is signed with secret_env)", quote(u.Redacted()))
		return ""
	}
	return s
}

// secretEnv reads the name of the variable holding the webhook secret.
func (l *loader) secretEnv(p string, v any) string {
	s := l.str(p, v)
	if _, ok := v.(string); ok && !isEnvName(s) {
		hint := ""
		if len(s) >= 16 && !strings.ContainsAny(s, " $") {
			hint = " (this looks like a secret itself: keep it out of the file)"
		}
		l.errorf(p, "%s is not an environment variable name%s: write the variable's name, e.g. secret_env = \"TOOLWARDEN_WEBHOOK_SECRET\"", quote(s), hint)
		return ""
	}
	return s
}

// WebhookTimeoutSec is timeout_sec, else the default.
func (w *Webhook) WebhookTimeoutSec() float64 {
	if w == nil || w.TimeoutSec == nil {
		return DefaultWebhookTimeoutSec
	}
	return *w.TimeoutSec
}

// pinChannels applies a requirements file's approval_channel pins: the
// top-level one for every call, an [apps.<id>] one for that app. Every user
// setting a pin replaces is reported as an Override.
func (c *Config) pinChannels(r *Requirements, override func(path string, at, req Position, msg string)) {
	if c.channelPins == nil {
		c.channelPins = map[string]ChannelSetting{}
	}
	pin := func(app string, s ChannelSetting) {
		s.Required = true
		c.channelPins[app] = s
		c.required[s.Path] = s.Pos
	}
	replaced := func(user ChannelSetting, req ChannelSetting) {
		if user.Value != ChannelUnset && user.Value != req.Value {
			override(user.Path, user.Pos, req.Pos, fmt.Sprintf("approval channel %s replaced by %s", quote(string(user.Value)), quote(string(req.Value))))
		}
	}
	if r.ApprovalChannel.Value != ChannelUnset {
		req := r.ApprovalChannel
		replaced(c.Channel, req)
		replaced(c.Default.ApprovalChannel, req)
		for _, id := range sortedAppIDs(c.Apps) {
			if _, own := r.apps[id]; !own || r.apps[id].ApprovalChannel.Value == ChannelUnset {
				replaced(c.Apps[id].ApprovalChannel, req)
			}
		}
		for _, name := range sortedServerNames(c.Servers) {
			replaced(c.Servers[name].ApprovalChannel, req)
		}
		pin("", req)
	}
	for _, id := range sortedAppIDs(r.apps) {
		req := r.apps[id].ApprovalChannel
		if req.Value == ChannelUnset {
			continue
		}
		if a := c.Apps[id]; a != nil {
			replaced(a.ApprovalChannel, req)
		}
		if s := c.Servers[id]; s != nil {
			replaced(s.ApprovalChannel, req)
		}
		pin(id, req)
	}
}

// cloneChannelPins copies the pins for Config.clone.
func (c *Config) cloneChannelPins() map[string]ChannelSetting { return maps.Clone(c.channelPins) }

// channels warns about channel settings that load but mislead: a webhook
// posting asks (arguments included) in clear text over the network, and an
// [apps.<name>] and [mcp_servers.<name>] that disagree (the app's wins).
func (v *validator) channels() {
	if w := v.cfg.Webhook; w != nil && w.URL != "" {
		if u, err := url.Parse(w.URL); err == nil && u.Scheme == "http" && !loopbackHost(u.Hostname()) {
			v.warn("webhook.url", w.Pos, "posts asks, with their arguments, unencrypted to %s: use https:// (the signature proves who sent a post, it does not hide it)", u.Host)
		}
	}
	for _, name := range sortedIDs(v.cfg.Servers) {
		s, a := v.cfg.Servers[name], v.cfg.Apps[name]
		if a == nil || a.ApprovalChannel.Value == ChannelUnset || s.ApprovalChannel.Value == ChannelUnset || a.ApprovalChannel.Value == s.ApprovalChannel.Value {
			continue
		}
		v.warn(s.ApprovalChannel.Path, s.Pos, "server %s's approval_channel %s is not used: [apps.%s] sets %s, and the app's setting wins; keep one of them", quote(name), quote(string(s.ApprovalChannel.Value)), quoteKey(name), quote(string(a.ApprovalChannel.Value)))
	}
}

func loopbackHost(h string) bool {
	switch h {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return strings.HasPrefix(h, "127.")
}
