// Package plugintest runs case files against a plugin: the conformance
// vectors of pdk/testdata and the user's own tests, for
// `toolwarden plugin test` (the file format is pdk/testdata/README.md).
package plugintest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// File is a case file (pdk/testdata/README.md).
type File struct {
	Description string `json:"description"`
	Plugin      Plugin `json:"plugin"`
	Cases       []Case `json:"cases"`
	// LoadError, when set, says the plugin must be refused at load with an
	// error containing this text; the file then has no cases.
	LoadError string `json:"load_error"`
}

// Plugin is the policy name and config the plugin is loaded with.
type Plugin struct {
	Name   string         `json:"name"`
	Config map[string]any `json:"config"`
}

// Case is one case.
type Case struct {
	Name  string          `json:"name"`
	Event json.RawMessage `json:"event"`
	// Input is a whole envelope, sent as written (key order and white
	// space kept). Without it the envelope is built from the parts below.
	Input    json.RawMessage `json:"input"`
	Session  json.RawMessage `json:"session"`
	Call     json.RawMessage `json:"call"`
	Baseline json.RawMessage `json:"baseline"`
	Result   json.RawMessage `json:"result"`
	Server   json.RawMessage `json:"server"`
	App      json.RawMessage `json:"app"`
	Tools    json.RawMessage `json:"tools"`
	Time     json.RawMessage `json:"time"`
	// InputText is the exact input bytes, for inputs that are not valid
	// JSON (and so cannot be an Input). Expand replaces each marker in it
	// by a repeated text, for big inputs without big files.
	InputText *string           `json:"input_text"`
	Expand    map[string]Repeat `json:"expand"`
	// Extra members are added to the envelope (unknown keys a plugin must
	// ignore).
	Extra  map[string]json.RawMessage `json:"extra"`
	Expect Expect                     `json:"expect"`
	// Steps, instead of one event, play several in one session: labels
	// the plugin adds are carried to the next step (scenario.go), and so is
	// a stateful plugin's state, which State starts (scenario_state.go).
	Steps []Step          `json:"steps"`
	State json.RawMessage `json:"state"`
	// Config, when given, is this case's plugin config instead of the
	// file's: the plugin is loaded with it (configcase.go), so that one
	// file holds a table of configs. LoadError says the plugin must be
	// refused at load with this config, with an error containing the text.
	Config    map[string]any `json:"config"`
	LoadError string         `json:"load_error"`
}

// Repeat is Times copies of Repeat (see Case.Expand).
type Repeat struct {
	Repeat string `json:"repeat"`
	Times  int    `json:"times"`
}

// Expect is what a case checks; only the fields given are compared.
type Expect struct {
	Decision       *string   `json:"decision"`
	Code           *string   `json:"code"`
	Remember       *bool     `json:"remember"`
	ReasonContains *string   `json:"reason_contains"`
	Labels         *[]string `json:"labels"`
	// SessionLabels is the session's labels after the event, as a set:
	// what a scenario carries to its next step.
	SessionLabels *[]string `json:"session_labels"`
	// State is a stateful plugin's state after a step of a scenario.
	State *session.PluginState `json:"state"`
	Hide  *[]string            `json:"hide"`
	// Reason is the verdict's whole reason; Arguments are the arguments it
	// flags, in order; Scopes are the scopes it proposes, in order.
	Reason     *string         `json:"reason"`
	Arguments  *[]string       `json:"arguments"`
	Scopes     *[]policy.Scope `json:"scopes"`
	NotHandled bool            `json:"not_handled"`
	Error      json.RawMessage `json:"error"` // true, or a substring of the fault
	Describe   *struct {
		Name    *string   `json:"name"`
		Version *string   `json:"version"`
		Events  *[]string `json:"events"`
	} `json:"describe"`
}

// ReadFile reads a case file. A key the format does not define is an
// error that says where it is and what was probably meant (strict.go).
func ReadFile(path string) (*File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, raw)
}

// Parse reads a case file's bytes; name is the file name its errors give.
func Parse(name string, raw []byte) (*File, error) {
	// Syntax first, over the whole file, so that a key error is never
	// reported for a file that is not JSON at all.
	err := checkSyntax(name, raw)
	if err == nil {
		err = checkKeys(name, raw)
	}
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(raw, int(se.Offset)-1)
			return nil, fmt.Errorf("%s:%d:%d: %v", name, line, col, se)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: unexpected end of the file", name)
		}
		return nil, err
	}
	var f File
	if err := decodeStrict(raw, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := f.validate(name); err != nil {
		return nil, err
	}
	return &f, nil
}

// Result is the outcome of one case.
type Result struct {
	Name string
	// Problems say what differed; none means the case passed.
	Problems []string
	Elapsed  time.Duration
}

// Run loads bin with the file's plugin name and config and runs the cases
// whose name matches filter (nil: all). defaultName names the policy when
// the file does not. The error is set when the plugin is refused at load.
func (f *File) Run(ctx context.Context, rt *plugin.Runtime, bin []byte, defaultName string, filter *regexp.Regexp) ([]Result, error) {
	name := f.Plugin.Name
	if name == "" {
		name = defaultName
	}
	start := time.Now()
	p, err := plugin.FromBytes(ctx, rt, &config.Policy{Name: name, Config: f.Plugin.Config, TimeoutMs: 5000}, bin)
	if f.LoadError != "" {
		r := Result{Name: "refused at load: " + f.LoadError, Elapsed: time.Since(start)}
		switch {
		case err == nil:
			p.Close()
			r.Problems = []string{fmt.Sprintf("want the plugin refused at load with %q; it loaded", f.LoadError)}
		case !strings.Contains(err.Error(), f.LoadError):
			r.Problems = []string{fmt.Sprintf("want a load error containing %q, got %v", f.LoadError, err)}
		}
		return []Result{r}, nil
	}
	if err != nil {
		return nil, err
	}
	defer p.Close()
	pluginJSON, _ := json.Marshal(map[string]any{"name": name, "config": orEmpty(f.Plugin.Config)})
	own := &caseConfigs{rt: rt, bin: bin, name: name}
	defer own.close()
	var out []Result
	for i := range f.Cases {
		tc := &f.Cases[i]
		if filter != nil && !filter.MatchString(tc.Name) {
			continue
		}
		start := time.Now()
		var problems []string
		switch cp, cj, done := own.plugin(ctx, tc); {
		case done != nil:
			problems = done
		case cp == nil:
			problems = runOne(ctx, p, tc, pluginJSON)
		default:
			problems = runOne(ctx, cp, tc, cj)
		}
		out = append(out, Result{Name: tc.Name, Problems: problems, Elapsed: time.Since(start)})
	}
	return out, nil
}

func runOne(ctx context.Context, p *plugin.Plugin, tc *Case, pluginJSON []byte) []string {
	if len(tc.Steps) > 0 {
		return runScenario(ctx, p, tc, pluginJSON)
	}
	return runCase(ctx, p, tc, pluginJSON)
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// caseEvent reads "check" or a number.
func caseEvent(raw json.RawMessage) (plugin.Event, string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var n uint32
		if err := json.Unmarshal(raw, &n); err != nil {
			return 0, "", fmt.Errorf("event %s: want a name or a number", raw)
		}
		return plugin.Event(n), "", nil
	}
	if ev, ok := plugin.ParseEvent(s); ok {
		return ev, s, nil
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return plugin.Event(n), "", nil
	}
	return 0, "", fmt.Errorf("event %q: want describe, list, check, observe or a number", s)
}

// parts are the members of an envelope that a case or a step gives.
type parts struct {
	Session, State, Call, Baseline, Result, Server, App, Tools, Time json.RawMessage
	Extra                                                            map[string]json.RawMessage
}

func (tc *Case) parts() *parts {
	return &parts{Session: tc.Session, Call: tc.Call, Baseline: tc.Baseline, Result: tc.Result,
		Server: tc.Server, App: tc.App, Tools: tc.Tools, Time: tc.Time, Extra: tc.Extra}
}

// buildInput assembles an envelope from a case's parts, in the host's key
// order, with defaults for what the case leaves out.
func buildInput(tc *parts, name string, pluginJSON []byte) []byte {
	var b bytes.Buffer
	member := func(key string, v json.RawMessage, def string) {
		if len(v) == 0 {
			if def == "" {
				return
			}
			v = json.RawMessage(def)
		}
		b.WriteString(`,"` + key + `":`)
		b.Write(v)
	}
	b.WriteString(`{"abi":1,"event":` + strconv.Quote(name))
	if name != "describe" {
		member("session", tc.Session, `{"id":"test","labels":[]}`)
		member("state", tc.State, "")
	}
	switch name {
	case "check":
		member("call", tc.Call, `{}`)
		member("baseline", tc.Baseline, `{"decision":"ask","mode":"auto","rememberable":true}`)
	case "observe":
		member("call", tc.Call, `{}`)
		member("result", tc.Result, `{"is_error":false,"text":""}`)
	case "list":
		member("server", tc.Server, `""`)
		member("app", tc.App, `""`)
		member("tools", tc.Tools, `[]`)
	}
	if name != "describe" {
		member("time", tc.Time, `"2026-01-01T00:00:00Z"`)
	}
	keys := make([]string, 0, len(tc.Extra))
	for k := range tc.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		member(k, tc.Extra[k], "")
	}
	b.WriteString(`,"plugin":`)
	b.Write(pluginJSON)
	b.WriteByte('}')
	return b.Bytes()
}

func runCase(ctx context.Context, p *plugin.Plugin, tc *Case, pluginJSON []byte) []string {
	ev, name, err := caseEvent(tc.Event)
	if err != nil {
		return []string{err.Error()}
	}
	input := []byte(tc.Input)
	if tc.InputText != nil {
		text := *tc.InputText
		for marker, r := range tc.Expand {
			if r.Times < 0 || r.Times > 1<<24 {
				return []string{fmt.Sprintf("expand %q: times %d out of range", marker, r.Times)}
			}
			text = strings.ReplaceAll(text, marker, strings.Repeat(r.Repeat, r.Times))
		}
		input = []byte(text)
	} else if len(input) == 0 {
		if name == "" {
			return []string{"a numbered event needs an \"input\""}
		}
		input = buildInput(tc.parts(), name, pluginJSON)
	}
	res, err := p.Raw(ctx, ev, input)
	return checkExpect(ev, &tc.Expect, res, err, nil)
}

// checkExpect compares an event's outcome with what is expected of it.
// session is the session's labels after the event (nil: not tracked).
func checkExpect(ev plugin.Event, x *Expect, res plugin.Result, err error, session []string) []string {
	if len(x.Error) > 0 && string(x.Error) != "false" {
		return checkFailure(x.Error, res, err)
	}
	if err != nil {
		return []string{"plugin failed: " + err.Error()}
	}
	if x.Describe != nil && res.Description == nil {
		return []string{"want a describe answer"}
	}
	var p problems
	if x.NotHandled && res.Code != plugin.CodeNotHandled && !(res.Code == plugin.CodeOK && len(res.Output) == 0) {
		p.add("want not handled (code 1 or empty output), got code %d output %s", res.Code, res.Output)
	}
	p.checkDescribe(x, res.Description)
	p.checkVerdict(x, res.Verdict)
	p.checkLabels(ev, x, res, session)
	return p
}

// problems collects what an outcome got wrong, one sentence each.
type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

// checkFailure compares an outcome with an expected plugin failure: any
// failure, or one whose message contains the expected string.
func checkFailure(want json.RawMessage, res plugin.Result, err error) []string {
	var p problems
	if err == nil {
		p.add("want a plugin failure, got output %s", res.Output)
	} else if sub := ""; json.Unmarshal(want, &sub) == nil && !strings.Contains(err.Error(), sub) {
		p.add("want a failure containing %q, got %v", sub, err)
	}
	return p
}

// checkDescribe compares a describe answer (got is set when x.Describe is).
func (p *problems) checkDescribe(x *Expect, got *plugin.Description) {
	d := x.Describe
	if d == nil {
		return
	}
	if d.Name != nil && got.Name != *d.Name {
		p.add("describe name: want %q, got %q", *d.Name, got.Name)
	}
	if d.Version != nil && got.Version != *d.Version {
		p.add("describe version: want %q, got %q", *d.Version, got.Version)
	}
	if d.Events != nil && !sameSet(*d.Events, got.Events) {
		p.add("describe events: want %v, got %v", *d.Events, got.Events)
	}
}

func (p *problems) checkVerdict(x *Expect, v policy.PluginVerdict) {
	if x.Decision != nil && v.Verdict.String() != *x.Decision {
		p.add("decision: want %s, got %s (code %q, reason %q)", *x.Decision, v.Verdict, v.Code, v.Reason)
	}
	if x.Code != nil && v.Code != *x.Code {
		p.add("code: want %q, got %q", *x.Code, v.Code)
	}
	if x.Remember != nil && v.Remember != *x.Remember {
		p.add("remember: want %v, got %v", *x.Remember, v.Remember)
	}
	if x.ReasonContains != nil && !strings.Contains(v.Reason, *x.ReasonContains) {
		p.add("reason: want it to contain %q, got %q", *x.ReasonContains, v.Reason)
	}
	if x.Reason != nil && v.Reason != *x.Reason {
		p.add("reason: want %q, got %q", *x.Reason, v.Reason)
	}
	if x.Arguments != nil && !slices.Equal(*x.Arguments, v.Arguments) {
		p.add("arguments: want %q, got %q", *x.Arguments, v.Arguments)
	}
	if x.Scopes != nil && !slices.Equal(*x.Scopes, v.Scopes) {
		p.add("scopes: want %+v, got %+v", *x.Scopes, v.Scopes)
	}
}

// checkLabels compares the labels an event set, the tools it hid and the
// session's labels after it.
func (p *problems) checkLabels(ev plugin.Event, x *Expect, res plugin.Result, session []string) {
	if x.Labels != nil {
		got := res.Labels
		if ev == plugin.EventCheck {
			got = res.Verdict.Labels
		}
		if !sameSet(*x.Labels, got) {
			p.add("labels: want %v, got %v", *x.Labels, got)
		}
	}
	if x.Hide != nil && !sameSet(*x.Hide, res.Hide) {
		p.add("hide: want %v, got %v", *x.Hide, res.Hide)
	}
	if x.SessionLabels != nil {
		if session == nil {
			p.add("session_labels: only a step of a scenario (\"steps\") carries a session")
		} else if !sameSet(*x.SessionLabels, session) {
			p.add("session_labels: want %v, got %v", *x.SessionLabels, session)
		}
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
