package plugintest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/internal/plugin"
)

// Step is one event of a scenario: a case with "steps" plays list, check
// and observe events in order within one session, as the host would.
type Step struct {
	// Name, optional, names the step in failure messages.
	Name     string                     `json:"name"`
	Event    json.RawMessage            `json:"event"`
	Call     json.RawMessage            `json:"call"`
	Baseline json.RawMessage            `json:"baseline"`
	Result   json.RawMessage            `json:"result"`
	Server   json.RawMessage            `json:"server"`
	App      json.RawMessage            `json:"app"`
	Tools    json.RawMessage            `json:"tools"`
	Time     json.RawMessage            `json:"time"`
	Extra    map[string]json.RawMessage `json:"extra"`
	Expect   Expect                     `json:"expect"`
}

// scenarioEvents are the events a step may play: the ones a session sees.
var scenarioEvents = []string{"list", "check", "observe"}

// scenarioSession is what a scenario carries from step to step: the case's
// session object with its labels kept up to date. Other members of the
// case's session are sent unchanged with every step.
type scenarioSession struct {
	members map[string]json.RawMessage
	labels  []string
}

func newSession(raw json.RawMessage) (*scenarioSession, error) {
	s := &scenarioSession{members: map[string]json.RawMessage{}}
	if len(raw) == 0 {
		raw = json.RawMessage(`{"id":"test","labels":[]}`)
	}
	if err := json.Unmarshal(raw, &s.members); err != nil {
		return nil, fmt.Errorf("session: %v", err)
	}
	if l, ok := s.members["labels"]; ok {
		if err := json.Unmarshal(l, &s.labels); err != nil {
			return nil, fmt.Errorf("session.labels: %v", err)
		}
	}
	if _, ok := s.members["id"]; !ok {
		s.members["id"] = json.RawMessage(`"test"`)
	}
	s.add(nil)
	return s, nil
}

// add adds labels, keeping them sorted and without duplicates, as the
// host sends them (ABI.md section 4).
func (s *scenarioSession) add(labels []string) {
	s.labels = append(s.labels, labels...)
	slices.Sort(s.labels)
	s.labels = slices.Compact(s.labels)
	if s.labels == nil {
		s.labels = []string{}
	}
	s.members["labels"], _ = json.Marshal(s.labels)
}

func (s *scenarioSession) json() json.RawMessage {
	b, _ := json.Marshal(s.members)
	return b
}

// runScenario plays a case's steps in order. A step without a call reuses
// the previous step's, so a check and the observe of the same call are
// written once. It stops at the first step that differs: later steps
// depend on what that one should have carried.
func runScenario(ctx context.Context, p *plugin.Plugin, tc *Case, pluginJSON []byte) []string {
	s, err := newSession(tc.Session)
	if err != nil {
		return []string{err.Error()}
	}
	st, err := newScenarioState(p, s, tc.State)
	if err != nil {
		return []string{err.Error()}
	}
	var call json.RawMessage
	for i := range tc.Steps {
		step := &tc.Steps[i]
		ev, name, err := caseEvent(step.Event)
		label := fmt.Sprintf("step %d (%s", i+1, name)
		if step.Name != "" {
			label += ": " + step.Name
		}
		label += ")"
		if err != nil {
			return []string{label + ": " + err.Error()}
		}
		if len(step.Call) > 0 {
			call = step.Call
		}
		in := &parts{Session: s.json(), Call: call, Baseline: step.Baseline, Result: step.Result,
			Server: step.Server, App: step.App, Tools: step.Tools, Time: step.Time, Extra: step.Extra}
		stateful := st != nil && (ev == plugin.EventCheck || ev == plugin.EventObserve)
		if stateful {
			in.State = st.json()
		}
		res, err := p.Raw(ctx, ev, buildInput(in, name, pluginJSON))
		if err == nil && stateful {
			// The host applies a state update whole or not at all; one it
			// refuses fails the event, as here.
			err = st.apply(res.Output)
		}
		if err == nil {
			// What the host adds: observe's labels and a check verdict's.
			switch ev {
			case plugin.EventObserve:
				s.add(res.Labels)
			case plugin.EventCheck:
				s.add(res.Verdict.Labels)
			}
		}
		problems := checkExpect(ev, &step.Expect, res, err, s.labels)
		if step.Expect.State != nil {
			problems = append(problems, st.check(step.Expect.State)...)
		}
		if len(problems) > 0 {
			for j := range problems {
				problems[j] = label + ": " + problems[j]
			}
			if i+1 < len(tc.Steps) {
				problems = append(problems, fmt.Sprintf("(steps %d-%d not run)", i+2, len(tc.Steps)))
			}
			return problems
		}
	}
	return nil
}

// validate checks what the key check cannot: that a case is either one
// event or a scenario, and that the values a runner compares are ones it
// can get.
func (f *File) validate(file string) error {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, file+": "+fmt.Sprintf(format, args...)) }
	if f.LoadError != "" && len(f.Cases) > 0 {
		bad("a file with load_error has no cases (the plugin never loads)")
	}
	for i := range f.Cases {
		tc := &f.Cases[i]
		where := fmt.Sprintf("cases[%d] %q", i, tc.Name)
		if tc.LoadError != "" {
			checkLoadErrorCase(tc, where, bad)
			continue
		}
		if len(tc.Steps) == 0 {
			if len(tc.Event) == 0 {
				bad("%s: no \"event\" (or \"steps\")", where)
			}
			if len(tc.State) > 0 {
				bad("%s: \"state\" is the plugin state a scenario starts with; it needs \"steps\"", where)
			}
			if tc.Expect.State != nil {
				bad("%s: expect: \"state\" is checked in the steps of a scenario", where)
			}
			checkExpectValues(&tc.Expect, where+": expect", bad)
			continue
		}
		single := map[string]bool{"event": len(tc.Event) > 0, "input": len(tc.Input) > 0,
			"input_text": tc.InputText != nil, "expand": tc.Expand != nil, "call": len(tc.Call) > 0,
			"baseline": len(tc.Baseline) > 0, "result": len(tc.Result) > 0, "server": len(tc.Server) > 0,
			"app": len(tc.App) > 0, "tools": len(tc.Tools) > 0, "time": len(tc.Time) > 0,
			"extra": tc.Extra != nil, "expect": !reflect.ValueOf(tc.Expect).IsZero()}
		for _, k := range []string{"event", "input", "input_text", "expand", "call", "baseline", "result", "server", "app", "tools", "time", "extra", "expect"} {
			if single[k] {
				bad("%s: %q belongs in a step when the case has \"steps\" (the case gives only name, session and steps)", where, k)
			}
		}
		for j := range tc.Steps {
			st := &tc.Steps[j]
			at := fmt.Sprintf("%s: steps[%d]", where, j)
			_, name, err := caseEvent(st.Event)
			switch {
			case len(st.Event) == 0:
				bad("%s: no \"event\" (%s)", at, strings.Join(scenarioEvents, ", "))
			case err != nil || !slices.Contains(scenarioEvents, name):
				bad("%s: event %s: a step plays %s", at, st.Event, strings.Join(scenarioEvents, ", "))
			}
			checkExpectValues(&st.Expect, at+": expect", bad)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// checkExpectValues rejects expected values no plugin can produce, which
// would fail for a reason the author did not mean ("alow").
func checkExpectValues(x *Expect, where string, bad func(string, ...any)) {
	if x.Decision != nil {
		switch *x.Decision {
		case "allow", "ask", "deny", "abstain":
		default:
			bad("%s: decision %q: want allow, ask, deny or abstain", where, *x.Decision)
		}
	}
	if len(x.Error) > 0 {
		var b bool
		var s string
		if json.Unmarshal(x.Error, &b) != nil && json.Unmarshal(x.Error, &s) != nil {
			bad("%s: error %s: want true, false or a substring of the failure", where, x.Error)
		}
	}
}
