package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file holds the typed readers the schema is built from. Each checks
// one value, reports a precise diagnostic when it is wrong, and returns a
// zero value then, so interpretation carries on and finds every problem.

// fields is a table's schema: known key -> how to read its value (given
// the value's path). Keys not listed are errors with a suggestion.
type fields map[string]func(path string, v any)

// table checks that v is a table and hands each key to its field reader,
// in key order so diagnostics come out deterministic.
func (l *loader) table(path string, v any, f fields) (map[string]any, bool) {
	t, ok := l.asTable(path, v)
	if !ok {
		return nil, false
	}
	known := make([]string, 0, len(f))
	for k := range f {
		known = append(known, k)
	}
	slices.Sort(known)
	for _, k := range sortedKeys(t) {
		kp := joinKey(path, k)
		read, ok := f[k]
		if !ok {
			l.unknownKey(path, k, t[k], f, known)
			continue
		}
		read(kp, t[k])
	}
	return t, true
}

// unknownKey reports key k of table path, which the schema does not have,
// with the likeliest fix: a near spelling, or, for a table in a table that
// holds tools, the tools level the author left out.
func (l *loader) unknownKey(path, k string, v any, f fields, known []string) {
	kp := joinKey(path, k)
	if dym := didYouMean(k, known); dym != "" {
		l.errorAt(kp, path, "unknown key %s%s", quote(k), dym)
		return
	}
	if _, isTable := v.(map[string]any); isTable && f["tools"] != nil {
		l.errorAt(kp, path, "unknown key %s; to configure the tool %s, write [%s]", quote(k), quote(k), joinKey(joinKey(path, "tools"), k))
		return
	}
	l.errorAt(kp, path, "unknown key %s", quote(k))
}

// asTable checks that v is a table.
func (l *loader) asTable(path string, v any) (map[string]any, bool) {
	t, ok := v.(map[string]any)
	if !ok {
		l.errorf(path, "expected a table, got %s", describe(v))
	}
	return t, ok
}

// tableOfTables reads a table whose keys are names the user chooses (apps,
// servers, tools) and whose values must be tables.
func (l *loader) tableOfTables(path string, v any, each func(path, name string, t map[string]any)) {
	t, ok := l.asTable(path, v)
	if !ok {
		return
	}
	for _, name := range sortedKeys(t) {
		p := joinKey(path, name)
		if sub, ok := l.asTable(p, t[name]); ok {
			each(p, name, sub)
		}
	}
}

func (l *loader) boolPtr(path string, v any) *bool {
	b, ok := v.(bool)
	if !ok {
		l.errorf(path, "expected a boolean (true or false), got %s", describe(v))
		return nil
	}
	return &b
}

func (l *loader) bool(path string, v any) bool {
	if p := l.boolPtr(path, v); p != nil {
		return *p
	}
	return false
}

func (l *loader) str(path string, v any) string {
	s, ok := v.(string)
	if !ok {
		l.errorf(path, "expected a string, got %s", describe(v))
	}
	return s
}

// strList reads an array of strings. An empty array is returned non-nil:
// enabled_tools = [] (no tool) differs from no enabled_tools (every tool).
func (l *loader) strList(path string, v any) []string {
	arr, ok := asArray(v)
	if !ok {
		l.errorf(path, "expected an array of strings, got %s", describe(v))
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			l.errorf(joinIndex(path, i), "expected a string, got %s", describe(e))
			continue
		}
		out = append(out, s)
	}
	return out
}

// strMap reads a table of strings.
func (l *loader) strMap(path string, v any) map[string]string {
	t, ok := l.asTable(path, v)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(t))
	for _, k := range sortedKeys(t) {
		s, ok := t[k].(string)
		if !ok {
			l.errorf(joinKey(path, k), "expected a string, got %s", describe(t[k]))
			continue
		}
		out[k] = s
	}
	return out
}

// enum reads a string that must be one of valid; kind names the value in
// the message ("approval mode").
func (l *loader) enum(path string, v any, kind string, valid ...string) string {
	s, ok := v.(string)
	if !ok {
		l.errorf(path, "expected a string (%s), got %s", orList(valid), describe(v))
		return ""
	}
	if !slices.Contains(valid, s) {
		l.errorf(path, "unknown %s %s%s; want %s", kind, quote(s), didYouMean(s, valid), orList(valid))
		return ""
	}
	return s
}

// approvalModes are AppToolApproval's values, in Codex's order.
var approvalModes = []string{string(ModeAuto), string(ModePrompt), string(ModeWrites), string(ModeApprove)}

func (l *loader) mode(path string, v any) Mode {
	return Mode(l.enum(path, v, "approval mode", approvalModes...))
}

var trustLevels = []string{"full", "pinned", "none"}

// ClientCapabilityNames are the client capabilities a proxy may pass on to
// a server (see Server.ClientCapabilities).
var ClientCapabilityNames = []string{"roots", "sampling", "elicitation"}

// enumList reads an array of strings, each one of valid, without repeats.
func (l *loader) enumList(path string, v any, kind string, valid ...string) []string {
	arr, ok := asArray(v)
	if !ok {
		l.errorf(path, "expected an array of strings (%s), got %s", orList(valid), describe(v))
		return nil
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s := l.enum(joinIndex(path, i), e, kind, valid...)
		if s == "" {
			continue
		}
		if slices.Contains(out, s) {
			l.errorf(joinIndex(path, i), "%s is listed twice", quote(s))
			continue
		}
		out = append(out, s)
	}
	return out
}

func (l *loader) trust(path string, v any) string {
	return l.enum(path, v, "trust level", trustLevels...)
}

// approvalsReviewer reads Codex's approvals_reviewer; the legacy
// guardian_subagent is kept as its newer name, auto_review.
func (l *loader) approvalsReviewer(path string, v any) string {
	if s, ok := v.(string); ok && s == "guardian_subagent" {
		return "auto_review"
	}
	return l.enum(path, v, "approvals reviewer", "user", "auto_review")
}

// seconds reads a duration in seconds: Codex takes an integer or a float
// (serde's f64 accepts both) and rejects what Duration cannot hold.
func (l *loader) seconds(path string, v any) *float64 {
	var f float64
	switch n := v.(type) {
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		l.errorf(path, "expected a number of seconds, got %s", describe(v))
		return nil
	}
	switch {
	case math.IsNaN(f) || f < 0:
		l.errorf(path, "expected a non-negative number of seconds, got %s", describe(v))
		return nil
	case f > maxSeconds:
		// A time.Duration overflows beyond ~292 years; nobody means that.
		l.errorf(path, "%s seconds is too long; at most %d", strconv.FormatFloat(f, 'g', -1, 64), int64(maxSeconds))
		return nil
	}
	return &f
}

const maxSeconds = float64(math.MaxInt64 / int64(time.Second))

// positiveInt reads an integer in [1, limit].
func (l *loader) positiveInt(path string, v any, limit int64, unit string) int {
	n, ok := v.(int64)
	if !ok {
		l.errorf(path, "expected a positive integer (%s), got %s", unit, describe(v))
		return 0
	}
	if n < 1 || n > limit {
		l.errorf(path, "expected an integer from 1 to %d (%s), got %d", limit, unit, n)
		return 0
	}
	return int(n)
}

// asArray accepts both inline arrays and arrays of tables ([[x]]), which
// the decoder returns as []map[string]any.
func asArray(v any) ([]any, bool) {
	switch a := v.(type) {
	case []any:
		return a, true
	case []map[string]any:
		out := make([]any, len(a))
		for i, t := range a {
			out[i] = t
		}
		return out, true
	}
	return nil, false
}

// describe names a value's TOML type for messages, with the value itself
// when it is short.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		if r := []rune(x); len(r) > 40 {
			x = string(r[:37]) + "..."
		}
		return "string " + quote(x)
	case int64:
		return "integer " + strconv.FormatInt(x, 10)
	case float64:
		return "float " + strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case time.Time:
		return "datetime"
	case map[string]any:
		return "table"
	case []any, []map[string]any:
		return "array"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("%T", v)
}

// quote writes a string the way TOML would.
func quote(s string) string { return strconv.Quote(s) }

// orList renders ["a", "b", "c"] as `"a", "b" or "c"`.
func orList(vs []string) string {
	var b strings.Builder
	for i, v := range vs {
		switch {
		case i == 0:
		case i == len(vs)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(quote(v))
	}
	return b.String()
}

func sortedKeys(t map[string]any) []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
