// Package secrets is the first-party plugin that keeps secrets in: when a
// tool result shows secret-shaped text (cloud keys, GitHub and Slack
// tokens, private keys, JWTs, API keys, high-entropy values assigned to
// secret-like names), the session is marked; a tool that can send data out
// is then asked about (not rememberably) or denied, and so is such a tool
// whose arguments carry a secret. Reasons name the kind of secret, never
// the secret.
//
//	[policies.secrets]
//	builtin = "secrets"
//	config.mode = "ask"                       # or "deny"
//	config.allow = ["AKIAIOSFODNN7EXAMPLE"]   # known-public tokens, exactly
//	config.disable = ["jwt"]                  # kinds not to look for
//	config.prefixes = [{ prefix = "acme_live_", kind = "acme_key", min_length = 24 }]
//
// observe: the result text is scanned (scan.go, named.go); if it holds a
// secret, the labels secret_seen and secret_seen:<kind> (one per kind:
// aws_access_key, github_token, ...) are added.
//
// check: every string of the arguments (names included) is scanned, and
// each member whose value is a string is judged as an assignment (its name
// and value). A call whose arguments carry a secret adds the same labels;
// if its tool can exfiltrate (call.capabilities.can_exfiltrate), or if the
// session already has secret_seen, the verdict is ask or deny with code
// secret_in_arguments or secret_in_session, naming the top-level arguments
// that carry it (an argument whose name is itself a secret is not named).
//
// The module toolwarden ships (plugins/secrets.wasm) is built from the
// Rust source in rust/ (a line-by-line port); this Go package is the
// reference. A differential test in internal/plugin
// (TestSecretsModuleMatchesGoReference, with FuzzSecretsMatchesGo) holds
// the module to this package's output, byte for byte.
package secrets

import (
	"strconv"
	"unicode/utf8"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// publicExamples are always allowed: the example keys of AWS's
// documentation and jwt.io's example token, public by design and found in
// countless READMEs and tests.
var publicExamples = []string{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"}

type prefix struct {
	text string
	kind string
	min  int
}

type config struct {
	mode     pdk.Decision
	disabled uint32
	allow    []string
	prefixes []prefix
	firsts   [256]bool // first bytes of prefixes
	starts   [256]bool // bytes the scanner stops at: starts and firsts
}

// Bounds of the config.
const (
	maxAllow       = 256
	maxAllowLen    = 512
	maxPrefixLen   = 32
	defaultMinimum = 20
)

// New returns the plugin with its own configuration state.
func New() *pdk.Plugin {
	c := &config{}
	return &pdk.Plugin{
		Name:    "secrets",
		Version: "1.0.0",
		Configure: func(cfg pdk.Value) error {
			*c = config{}
			return c.parse(cfg)
		},
		Check:   c.check,
		Observe: c.observe,
	}
}

func (c *config) parse(cfg pdk.Value) error {
	c.mode = pdk.Ask
	c.starts = starts
	c.allow = append(c.allow, publicExamples...)
	var err error
	cfg.Members(func(key string, v pdk.Value) bool {
		switch key {
		case "mode":
			switch {
			case v.StrEquals("ask"):
			case v.StrEquals("deny"):
				c.mode = pdk.Deny
			default:
				err = pdk.ConfigError("mode", `want "ask" or "deny", got `+string(v.Raw()))
			}
		case "allow":
			err = eachString(v, "allow", func(at, s string) error {
				if len(s) == 0 || len(s) > maxAllowLen {
					return pdk.ConfigError(at, "want a token of 1 to 512 bytes")
				}
				if len(c.allow) == len(publicExamples)+maxAllow {
					return pdk.ConfigError(at, "too many tokens (at most 256)")
				}
				c.allow = append(c.allow, s)
				return nil
			})
		case "disable":
			err = eachString(v, "disable", func(at, s string) error {
				for k, n := range kindNames {
					if s == n {
						c.disabled |= 1 << k
						return nil
					}
				}
				return pdk.ConfigError(at, "unknown kind "+pdk.Quote(s)+" (kinds: aws_access_key, aws_secret_key, "+
					"gcp_service_account, azure_storage_key, github_token, slack_token, slack_webhook, private_key, jwt, "+
					"stripe_key, openai_key, anthropic_key, named_secret)")
			})
		case "prefixes":
			err = c.parsePrefixes(v)
		default:
			err = pdk.ConfigError(key, `unknown key (secrets knows "mode", "allow", "disable" and "prefixes")`)
		}
		return err == nil
	})
	return err
}

// eachString calls fn for each element of an array of strings.
func eachString(v pdk.Value, name string, fn func(at, s string) error) error {
	if v.Kind() != pdk.Array {
		return pdk.ConfigError(name, "want an array of strings")
	}
	var err error
	v.Each(func(i int, e pdk.Value) bool {
		at := name + "[" + strconv.Itoa(i) + "]"
		s, ok := e.Str()
		if !ok {
			err = pdk.ConfigError(at, "want a string")
		} else {
			err = fn(at, s)
		}
		return err == nil
	})
	return err
}

func (c *config) parsePrefixes(v pdk.Value) error {
	if v.Kind() != pdk.Array {
		return pdk.ConfigError("prefixes", `want an array of tables like {prefix = "acme_", kind = "acme_token"}`)
	}
	var err error
	v.Each(func(i int, e pdk.Value) bool {
		at := "prefixes[" + strconv.Itoa(i) + "]"
		if i == maxPrefixes {
			err = pdk.ConfigError(at, "too many prefixes (at most 16)")
			return false
		}
		if e.Kind() != pdk.Object {
			err = pdk.ConfigError(at, `want a table like {prefix = "acme_", kind = "acme_token"}`)
			return false
		}
		p := prefix{min: defaultMinimum}
		e.Members(func(key string, f pdk.Value) bool {
			switch key {
			case "prefix", "kind":
				s, ok := f.Str()
				if !ok {
					err = pdk.ConfigError(at+"."+key, "want a string")
				} else if key == "prefix" {
					p.text = s
				} else {
					p.kind = s
				}
			case "min_length":
				n, ok := f.Float()
				if !ok || n < 1 || n > 1024 || n != float64(int(n)) {
					err = pdk.ConfigError(at+".min_length", "want a whole number from 1 to 1024, got "+string(f.Raw()))
				} else {
					p.min = int(n)
				}
			default:
				err = pdk.ConfigError(at+"."+key, `unknown key (want "prefix", "kind" and optionally "min_length")`)
			}
			return err == nil
		})
		if err != nil {
			return false
		}
		err = c.addPrefix(at, p)
		return err == nil
	})
	return err
}

func (c *config) addPrefix(at string, p prefix) error {
	if len(p.text) < 3 || len(p.text) > maxPrefixLen || run(p.text, 0, isURL64) != len(p.text) {
		return pdk.ConfigError(at+".prefix", "want 3 to 32 of A-Z, a-z, 0-9, '_' and '-'")
	}
	if len(p.kind) == 0 || len(p.kind) > 32 || !lowerWord(p.kind) {
		return pdk.ConfigError(at+".kind", "want 1 to 32 of a-z, 0-9 and '_' (it names the label secret_seen:<kind>)")
	}
	for _, n := range kindNames {
		if p.kind == n {
			return pdk.ConfigError(at+".kind", pdk.Quote(p.kind)+" is a built-in kind")
		}
	}
	for _, q := range c.prefixes {
		if p.kind == q.kind {
			return pdk.ConfigError(at+".kind", pdk.Quote(p.kind)+" is given twice")
		}
	}
	c.prefixes = append(c.prefixes, p)
	c.firsts[p.text[0]] = true
	c.starts[p.text[0]] = true
	return nil
}

func lowerWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_') {
			return false
		}
	}
	return true
}

// kindName names kind k (built-in or a config prefix's).
func (c *config) kindName(k int) string {
	if k < int(builtinKinds) {
		return kindNames[k]
	}
	return c.prefixes[k-int(builtinKinds)].kind
}

// labels are secret_seen and one secret_seen:<kind> per kind in m.
func (c *config) labels(m uint32) []string {
	if m == 0 {
		return nil
	}
	out := []string{LabelSeen}
	for k := 0; k < int(builtinKinds)+len(c.prefixes); k++ {
		if m&(1<<k) != 0 {
			out = append(out, LabelSeen+":"+c.kindName(k))
		}
	}
	return out
}

// describe lists the kinds of m for a reason: "a GitHub token, a private
// key and a JSON Web Token".
func (c *config) describe(m uint32) string {
	var parts []string
	for k := 0; k < int(builtinKinds)+len(c.prefixes); k++ {
		if m&(1<<k) == 0 {
			continue
		}
		if k < int(builtinKinds) {
			parts = append(parts, kindText[k])
		} else {
			parts = append(parts, "a "+c.kindName(k)+" (a configured prefix)")
		}
	}
	if len(parts) == 0 {
		return "a secret"
	}
	s := parts[0]
	for i := 1; i < len(parts); i++ {
		if i == len(parts)-1 {
			s += " and "
		} else {
			s += ", "
		}
		s += parts[i]
	}
	return s
}

func (c *config) observe(o *pdk.Observe) []string {
	return c.labels(c.scan(o.Result().Text))
}

// sessionKinds reads whether a session is marked (secret_seen, or any
// secret_seen:<kind>) and the kinds its labels name that this config
// knows (m == 0 when it knows none of them).
func (c *config) sessionKinds(s pdk.Session) (m uint32, marked bool) {
	s.Labels().Each(func(_ int, v pdk.Value) bool {
		l, _ := v.Str()
		if l == LabelSeen {
			marked = true
		} else if len(l) > len(LabelSeen)+1 && l[:len(LabelSeen)+1] == LabelSeen+":" {
			marked = true
			for k := 0; k < int(builtinKinds)+len(c.prefixes); k++ {
				if l[len(LabelSeen)+1:] == c.kindName(k) {
					m |= 1 << k
				}
			}
		}
		return true
	})
	return m, marked
}

func (c *config) check(ch *pdk.Check) pdk.Verdict {
	call := ch.Call()
	var argKinds uint32
	var flagged []string
	hidden := false // an argument name is itself a secret
	call.Arguments().Members(func(name string, v pdk.Value) bool {
		inName := c.scan(name)
		m := inName | c.member(name, v)
		if m == 0 {
			return true
		}
		argKinds |= m
		if inName != 0 {
			hidden = true
		} else if f, ok := flag(name); ok && len(flagged) < 16 {
			flagged = append(flagged, f)
		}
		return true
	})
	labels := c.labels(argKinds)
	if !call.Capabilities().CanExfiltrate {
		return pdk.Verdict{Labels: labels}
	}
	seen, marked := c.sessionKinds(ch.Session())
	if argKinds == 0 && !marked {
		return pdk.NoOpinion()
	}
	v := pdk.Verdict{Decision: c.mode, Labels: labels, Arguments: flagged}
	tool := pdk.Quote(call.ToolName())
	if argKinds != 0 {
		v.Code = CodeArguments
		v.Reason = "the arguments"
		if len(flagged) > 0 {
			v.Reason += " ("
			for i, f := range flagged {
				if i > 0 {
					v.Reason += ", "
				}
				v.Reason += pdk.Quote(f)
			}
			v.Reason += ")"
		}
		if hidden {
			v.Reason += " (in an argument's name)"
		}
		v.Reason += " carry what looks like " + c.describe(argKinds) + ", and " + tool + " can send data out"
		if marked {
			v.Reason += "; this session has also seen " + c.describe(seen)
		}
		return v
	}
	v.Code = CodeSession
	v.Reason = "this session has seen " + c.describe(seen) + ", and " + tool + " can send data out"
	return v
}

// member scans a value and, for an object's string members, judges each
// as an assignment.
func (c *config) member(name string, v pdk.Value) uint32 {
	switch v.Kind() {
	case pdk.String:
		s, _ := v.Str()
		return c.scan(s) | c.named(name, s[:min(run(s, 0, isValue), maxValue+1)])
	case pdk.Object:
		var m uint32
		v.Members(func(k string, e pdk.Value) bool {
			m |= c.scan(k) | c.member(k, e)
			return true
		})
		return m
	case pdk.Array:
		var m uint32
		v.Each(func(_ int, e pdk.Value) bool {
			m |= c.member(name, e)
			return true
		})
		return m
	}
	return 0
}

// flag names a top-level argument as the verdict's "arguments" key takes
// it (pdk/ABI.md 5.2): the name itself, or a JSON pointer when the name
// starts with '/' or is empty; ok is false when the host could not take
// it (not UTF-8, or over 256 bytes).
func flag(name string) (string, bool) {
	if !utf8.ValidString(name) {
		return "", false
	}
	if name != "" && name[0] != '/' {
		return name, len(name) <= 256
	}
	p := "/"
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '~':
			p += "~0"
		case '/':
			p += "~1"
		default:
			p += name[i : i+1]
		}
	}
	return p, len(p) <= 256
}
