package hook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Codex (0.171) runs a command hook of the user's or a project's config
// only once the user trusted it: trust is recorded in the user's
// config.toml as
//
//	[hooks.state."<file>:<event>:<group>:<handler>"]
//	trusted_hash = "sha256:<hex>"
//
// where <file> is the config.toml (or hooks.json) that declares the hook,
// <event> the event's snake_case name, <group> and <handler> the hook's
// places (from 0) in that event's list and in its group, and the hash is
// over the hook's normalized declaration (codexHookHash). A hook without a
// matching hash is skipped without a word (codex exec included), so a
// toolwarden hook nobody trusted decides nothing. Interactive Codex asks
// about new or changed hooks at start ("Trust all and continue") and in
// /hooks; `--dangerously-bypass-hook-trust` skips the check for one run.
// Project layers (.codex/ between the project root and the working
// folder) load at all only when the project is trusted
// ([projects."<root>"] trust_level = "trusted").

// CodexHook is one command hook Codex is configured with, and its trust.
type CodexHook struct {
	File    string // the config.toml or hooks.json that declares it
	Event   string // as configured: PreToolUse, PostToolUse, ...
	Group   int    // its matcher group's place in the event's list, from 0
	Handler int    // its place in the group, from 0
	Matcher string
	Command string
	// Key is where Codex records the hook's state in the user's config.
	Key string
	// Hash is what Codex's trusted_hash must be for Codex to run the hook.
	Hash string
	// TrustedHash is the trusted_hash recorded for Key, "" when none.
	TrustedHash string
	// Disabled is set when the user's config says enabled = false.
	Disabled bool
	// ProjectUntrusted, when set, says why Codex loads no hook of File at
	// all: the project folder is not trusted.
	ProjectUntrusted string
}

// Trusted reports whether Codex runs the hook: enabled, in a loaded file,
// and trusted as it is now.
func (h *CodexHook) Trusted() bool {
	return !h.Disabled && h.ProjectUntrusted == "" && h.TrustedHash == h.Hash
}

// Modified reports whether the hook was trusted once but has changed since.
func (h *CodexHook) Modified() bool { return h.TrustedHash != "" && h.TrustedHash != h.Hash }

// UserConfig is Codex's user config.toml (in CODEX_HOME, default ~/.codex),
// where Codex records hook trust.
func (p Places) UserConfig() string { return p.ConfigFiles(Codex)[0] }

// codexHookEvents are the events whose hooks decide or see tool calls,
// with Codex's snake_case names for them; their matchers are kept.
var codexHookEvents = map[string]string{
	"PreToolUse":        "pre_tool_use",
	"PostToolUse":       "post_tool_use",
	"PermissionRequest": "permission_request",
}

// CodexHooks lists the command hooks of tool events that Codex reads for
// the project: the user's config.toml and hooks.json, then each project
// layer's, with the trust Codex records for each. A file that cannot be
// read or parsed is an error; the others are still listed.
func (p Places) CodexHooks() ([]CodexHook, []error) {
	user := p.UserConfig()
	states, err := codexUserState(user)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	var out []CodexHook
	add := func(file, untrusted string) {
		hooks, err := codexFileHooks(file)
		if err != nil {
			errs = append(errs, err)
		}
		for _, h := range hooks {
			st := states[h.Key]
			h.TrustedHash, h.Disabled, h.ProjectUntrusted = st.TrustedHash, st.Enabled != nil && !*st.Enabled, untrusted
			out = append(out, h)
		}
	}
	dir := filepath.Dir(user)
	add(filepath.Join(dir, "hooks.json"), "")
	add(user, "")
	cp, err := p.codexProjectOf()
	if err != nil {
		return out, append(errs, err)
	}
	for _, d := range cp.dirs {
		untrusted := ""
		if !cp.trusted(filepath.Dir(d)) {
			untrusted = fmt.Sprintf("Codex loads no config of the project %s until it is trusted ([projects.%q] trust_level = \"trusted\" in %s, or answer Codex's trust prompt in that folder)", cp.root, cp.root, user)
		}
		add(filepath.Join(d, "hooks.json"), untrusted)
		add(filepath.Join(d, "config.toml"), untrusted)
	}
	return out, errs
}

type codexHookState struct {
	Enabled     *bool  `toml:"enabled"`
	TrustedHash string `toml:"trusted_hash"`
}

// codexUserState reads the hook states of the user's config; a missing
// file has none. Project trust is codexProjectOf's (mcpresolve.go).
func codexUserState(path string) (map[string]codexHookState, error) {
	var cfg struct {
		Hooks struct {
			State map[string]codexHookState `toml:"state"`
		} `toml:"hooks"`
	}
	if _, err := toml.DecodeFile(path, &cfg); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	states := make(map[string]codexHookState, len(cfg.Hooks.State))
	for k, s := range cfg.Hooks.State {
		states[strings.TrimSpace(k)] = s // Codex trims keys
	}
	return states, nil
}

// codexMatcherGroup is one [[hooks.<Event>]] entry.
type codexMatcherGroup struct {
	Matcher *string          `toml:"matcher" json:"matcher"`
	Hooks   []map[string]any `toml:"hooks" json:"hooks"`
}

// codexFileHooks reads the command hooks of tool events in one Codex file:
// a config.toml's [hooks] or a hooks.json's "hooks". A missing file has
// none.
func codexFileHooks(path string) ([]CodexHook, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	events := map[string][]codexMatcherGroup{}
	if strings.HasSuffix(path, ".json") {
		var f struct {
			Hooks map[string]json.RawMessage `json:"hooks"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for ev, raw := range f.Hooks {
			var groups []codexMatcherGroup
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if codexHookEvents[ev] != "" && dec.Decode(&groups) == nil {
				events[ev] = groups
			}
		}
	} else {
		var f struct {
			Hooks map[string]toml.Primitive `toml:"hooks"`
		}
		md, err := toml.Decode(string(data), &f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for ev, prim := range f.Hooks {
			var groups []codexMatcherGroup
			if codexHookEvents[ev] != "" && md.PrimitiveDecode(prim, &groups) == nil {
				events[ev] = groups
			}
		}
	}
	var out []CodexHook
	names := make([]string, 0, len(events))
	for ev := range events {
		names = append(names, ev)
	}
	sort.Strings(names)
	for _, ev := range names {
		for gi, g := range events[ev] {
			for hi, raw := range g.Hooks {
				h, ok := codexCommandHook(path, ev, gi, hi, g.Matcher, raw)
				if ok {
					out = append(out, h)
				}
			}
		}
	}
	return out, nil
}

// codexCommandHook reads one handler; only command handlers with a
// command run.
func codexCommandHook(path, event string, group, handler int, matcher *string, raw map[string]any) (CodexHook, bool) {
	if t, _ := raw["type"].(string); t != "command" {
		return CodexHook{}, false
	}
	command, _ := raw["command"].(string)
	if strings.TrimSpace(command) == "" {
		return CodexHook{}, false
	}
	label := codexHookEvents[event]
	h := CodexHook{File: path, Event: event, Group: group, Handler: handler, Command: command,
		Key: path + ":" + label + ":" + strconv.Itoa(group) + ":" + strconv.Itoa(handler)}
	if matcher != nil {
		h.Matcher = *matcher
	}
	h.Hash = codexHookHash(label, matcher, raw)
	return h, true
}

// codexHookHash is Codex's trust hash of a command hook: SHA-256 over the
// compact JSON, keys sorted, of {"event_name", "matcher" (when set),
// "hooks": [the handler normalized]}, where the normalized handler keeps
// type, command, timeout (default 600, at least 1), async (default
// false), statusMessage and additionalContextLimit (when set), and drops
// commandWindows. Values absent from the declaration are absent from the
// JSON, as Codex's round trip through TOML drops them.
func codexHookHash(label string, matcher *string, raw map[string]any) string {
	handler := map[string]any{
		"type":    "command",
		"command": raw["command"],
		"timeout": codexTimeout(raw),
		"async":   raw["async"] == true,
	}
	for _, k := range []string{"statusMessage", "additionalContextLimit"} {
		if v, ok := raw[k]; ok && v != nil {
			handler[k] = v
		}
	}
	identity := map[string]any{"event_name": label, "hooks": []any{handler}}
	if matcher != nil {
		identity["matcher"] = *matcher
	}
	var b bytes.Buffer
	writeCanonicalJSON(&b, identity)
	sum := sha256.Sum256(b.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// codexTimeout is the handler's timeout in seconds as Codex normalizes it.
func codexTimeout(raw map[string]any) int64 {
	n := int64(600)
	// Only "timeout": Codex 0.171 reads no "timeoutSec" (its hooks/list
	// shows such a hook with the default).
	switch t := raw["timeout"].(type) {
	case int64:
		n = t
	case json.Number:
		if i, err := t.Int64(); err == nil {
			n = i
		}
	}
	return max(n, 1)
}

// writeCanonicalJSON writes v as serde_json writes it after sorting every
// object's keys: no spaces, strings escaped only where JSON requires it
// (", \, and control characters; \b \f \n \r \t by name, the others as
// \u00xx), everything else as UTF-8.
func writeCanonicalJSON(b *bytes.Buffer, v any) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			writeCanonicalJSON(b, t[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonicalJSON(b, x)
		}
		b.WriteByte(']')
	case string:
		writeJSONString(b, t)
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case int64:
		b.WriteString(strconv.FormatInt(t, 10))
	case json.Number:
		b.WriteString(t.String())
	case float64:
		b.WriteString(strconv.FormatFloat(t, 'g', -1, 64))
	default:
		b.WriteString("null")
	}
}

func writeJSONString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}
