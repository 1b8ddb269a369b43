package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// Output documents (pdk/ABI.md section 5) are read with rawjson.Reader. Unknown keys
// are skipped (after validation); null means absent; anything else that does
// not fit is a bad output.

const (
	maxReason    = 1024
	maxLabels    = 32
	maxErrorText = 256
	defaultCode  = "plugin"
)

// Description is a plugin's answer to describe.
type Description struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Events  []string `json:"events"`
}

// notObject explains output that is not a JSON object at all.
func notObject(out []byte) error {
	if r := newReader(out); r.Peek() == '{' {
		return nil
	}
	return fmt.Errorf("not a JSON object: %q", truncate(string(out), 40))
}

func parseDescribe(out []byte) (Description, error) {
	var d Description
	hasEvents := false
	err := members(out, func(r *rawjson.Reader, k []byte) (err error) {
		switch string(k) {
		case "name":
			d.Name, err = r.StringValue()
		case "version":
			d.Version, err = r.StringValue()
		case "events":
			hasEvents = true
			d.Events, err = stringArray(r, nil, 16, func(s string) error { return nil })
		default:
			err = r.SkipValue()
		}
		return err
	})
	if err != nil {
		return d, err
	}
	if d.Name == "" || len(d.Name) > 64 {
		return d, errors.New(`"name" must be a string of 1-64 bytes`)
	}
	if d.Version == "" || len(d.Version) > 64 {
		return d, errors.New(`"version" must be a string of 1-64 bytes`)
	}
	if !hasEvents {
		d.Events = []string{"check"}
	}
	return d, nil
}

// parseCheck reads a verdict.
func parseCheck(out []byte) (policy.PluginVerdict, error) {
	v := policy.PluginVerdict{Code: defaultCode}
	hasDecision := false
	err := members(out, func(r *rawjson.Reader, k []byte) (err error) {
		switch string(k) {
		case "decision":
			var s []byte
			if r.Peek() != '"' {
				return errors.New(`"decision" must be a string`)
			}
			if s, err = r.Str(); err != nil {
				return err
			}
			var ok bool
			if v.Verdict, ok = policy.ParseVerdict(string(s)); !ok {
				return fmt.Errorf("decision %q is not allow, ask, deny or abstain", truncate(string(s), 32))
			}
			hasDecision = true
		case "code":
			if v.Code, err = r.StringValue(); err == nil && !validCode(v.Code) {
				err = fmt.Errorf("code %q must match [a-z0-9_.:-]{1,64}", truncate(v.Code, 80))
			}
		case "reason":
			if v.Reason, err = r.StringValue(); err == nil {
				v.Reason = cleanText(v.Reason, maxReason)
			}
		case "remember":
			v.Remember, err = r.BoolValue()
		case "labels":
			v.Labels, err = labels(r)
		case "arguments":
			v.Arguments, err = stringArray(r, nil, policy.MaxFlagged, checkArgumentName)
		case "scopes":
			v.Scopes, err = scopes(r) // output_scope.go
		default:
			err = r.SkipValue()
		}
		return err
	})
	if err == nil && !hasDecision {
		err = errors.New(`missing "decision"`)
	}
	if err == nil {
		err = checkVerdictScopes(&v)
	}
	return v, err
}

// checkArgumentName refuses a flagged argument that names nothing a prompt
// could show: empty, too long, not UTF-8, or a malformed JSON pointer.
func checkArgumentName(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("argument %q is not valid UTF-8", truncate(s, 80))
	}
	if err := policy.CheckArgumentName(s); err != nil {
		return fmt.Errorf("argument %q: %v", truncate(s, 80), err)
	}
	return nil
}

// parseList reads observe's {"labels":[..]} (key "labels") or list's
// {"hide":[..]} (key "hide").
func parseList(out []byte, key string) ([]string, error) {
	var list []string
	err := members(out, func(r *rawjson.Reader, k []byte) (err error) {
		switch {
		case string(k) == key && key == "labels":
			list, err = labels(r)
		case string(k) == key:
			list, err = stringArray(r, nil, 1<<16, func(string) error { return nil })
		default:
			err = r.SkipValue()
		}
		return err
	})
	return list, err
}

// members reads out as one JSON object and calls member for each key whose
// value is not null, with the reader at the value; member must consume it.
// Null members are read as absent.
func members(out []byte, member func(r *rawjson.Reader, k []byte) error) error {
	if err := notObject(out); err != nil {
		return err
	}
	r := newReader(out)
	more, err := r.BeginObject()
	for err == nil && more {
		var k []byte
		if k, err = r.Key(); err != nil {
			break
		}
		if !r.Null() {
			if err = member(&r, k); err != nil {
				break
			}
		}
		more, err = r.More('}')
	}
	if err == nil {
		err = r.End()
	}
	return err
}

func labels(r *rawjson.Reader) ([]string, error) {
	return stringArray(r, nil, maxLabels, func(s string) error {
		if !validLabel(s) {
			return fmt.Errorf("label %q must match [A-Za-z0-9_.:/-]{1,64}", truncate(s, 80))
		}
		return nil
	})
}

// stringArray reads an array of at most max strings.
func stringArray(r *rawjson.Reader, dst []string, max int, check func(string) error) ([]string, error) {
	if r.Peek() != '[' {
		return nil, r.Fail("expected an array of strings")
	}
	more, err := r.BeginArray()
	for err == nil && more {
		if r.Peek() != '"' {
			err = r.Fail("expected a string")
			break
		}
		var s []byte
		if s, err = r.Str(); err != nil {
			break
		}
		if len(dst) == max {
			err = fmt.Errorf("more than %d entries", max)
			break
		}
		str := string(s)
		if err = check(str); err != nil {
			break
		}
		dst = append(dst, str)
		more, err = r.More(']')
	}
	return dst, err
}

func validCode(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

func validLabel(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == '.' || c == ':' || c == '/' || c == '-') {
			return false
		}
	}
	return true
}

// cleanText makes guest text safe to show: valid UTF-8, no control
// characters except newline and tab, at most n bytes.
func cleanText(s string, n int) string {
	clean := utf8.ValidString(s)
	for i := 0; clean && i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			clean = false
		}
	}
	if !clean {
		s = strings.Map(func(r rune) rune {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
				return '\uFFFD'
			}
			return r
		}, strings.ToValidUTF8(s, "\uFFFD"))
	}
	return truncate(s, n)
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// memo remembers an instance's last output and what it parsed to. Plugins
// tend to answer the same way many times in a row; reusing the parsed
// strings keeps the steady state free of allocations.
type memo struct {
	ev      Event
	out     []byte
	verdict policy.PluginVerdict
	list    []string
}

const maxMemo = 4 << 10

func (m *memo) hit(ev Event, out []byte) bool {
	return m.out != nil && m.ev == ev && bytes.Equal(m.out, out)
}

func (m *memo) store(ev Event, out []byte) {
	if len(out) > maxMemo {
		m.out = nil
		return
	}
	m.ev = ev
	m.out = append(m.out[:0], out...)
}
