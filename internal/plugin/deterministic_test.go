package plugin

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// A plugin that declares "deterministic" is not entered again for an input
// identical to its instance's last one, and is for any input that differs
// in a part it reads (arguments, labels) or after another input came
// between; a plugin that does not declare it is entered for every check.
// The guest counts the checks it ran, so its reason shows when the host
// entered it.
func TestADeterministicPluginIsNotEnteredAgainForTheSameInput(t *testing.T) {
	rt := newRuntime(t, Options{})
	bin := buildGuest(t, "./testdata/godeterministic")
	ctx := context.Background()
	a, b := checkInput(`{"path":"/a"}`, "private"), checkInput(`{"path":"/b"}`, "private")
	aLabelled := checkInput(`{"path":"/a"}`, "private", "untrusted")
	for _, tc := range []struct {
		name          string
		deterministic bool
		inputs        []*policy.CheckInput
		want          []string // the guest's count in each verdict
	}{
		{"declared: the same input twice enters the guest once", true, []*policy.CheckInput{a, a, a}, []string{"1", "1", "1"}},
		{"declared: other arguments are a new input", true, []*policy.CheckInput{a, b, b}, []string{"1", "2", "2"}},
		{"declared: another label is a new input", true, []*policy.CheckInput{a, aLabelled, aLabelled}, []string{"1", "2", "2"}},
		{"declared: only the last input is kept", true, []*policy.CheckInput{a, b, a}, []string{"1", "2", "3"}},
		{"not declared: every check enters the guest", false, []*policy.CheckInput{a, a, a}, []string{"1", "2", "3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := FromBytes(ctx, rt, &config.Policy{Name: "det", Config: map[string]any{"deterministic": tc.deterministic}}, bin)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			if p.Deterministic() != tc.deterministic {
				t.Fatalf("Deterministic() = %v", p.Deterministic())
			}
			// The checks run one after another, so one instance answers
			// them all and the counts are one guest's.
			for i, in := range tc.inputs {
				v := p.Check(ctx, in)
				if v.Err != nil {
					t.Fatal(v.Err)
				}
				if v.Verdict != policy.Ask || v.Reason != tc.want[i] {
					t.Fatalf("check %d: %s %q, want ask %q", i, v.Verdict, v.Reason, tc.want[i])
				}
			}
		})
	}
}

// A plugin that declares both "deterministic" and "state" is entered for
// every check: its verdict may depend on the session's state, and a state
// update it would have made must not be skipped. The guest changes no
// state, so every input is byte for byte the same, and a reused verdict
// would show as a count that does not move.
func TestAStatefulPluginIsEnteredForEveryCheckEvenWhenDeterministic(t *testing.T) {
	rt := newRuntime(t, Options{})
	bin := buildGuest(t, "./testdata/godeterministic")
	ctx := context.Background()
	p, err := FromBytes(ctx, rt, &config.Policy{Name: "det", Config: map[string]any{"deterministic": true, "state": true}}, bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if !p.Stateful() || !p.Deterministic() {
		t.Fatalf("Stateful() = %v, Deterministic() = %v: the guest declares both", p.Stateful(), p.Deterministic())
	}
	s := session.NewStore(nil).Get("s")
	for i, want := range []string{"1", "2", "3"} {
		v := p.Check(ctx, stateCheck(s, "write_file"))
		if v.Err != nil {
			t.Fatal(v.Err)
		}
		if v.Reason != want {
			t.Fatalf("check %d: the guest's count is %q, want %q (a stateful verdict was reused)", i, v.Reason, want)
		}
	}
}

// A fault is never kept: the next identical input enters the guest again.
func TestAFaultIsNotKeptAsTheLastVerdict(t *testing.T) {
	var l lastCheck
	l.keep([]byte("in"), policy.PluginVerdict{Verdict: policy.Allow}, nil)
	if v, ok := l.reuse([]byte("in")); !ok || v.Verdict != policy.Allow {
		t.Fatalf("a kept verdict is not reused: %v %v", v, ok)
	}
	if _, ok := l.reuse([]byte("in2")); ok {
		t.Fatal("another input reused the verdict")
	}
	l.keep([]byte("in"), policy.PluginVerdict{}, &Fault{Kind: FaultTimeout, Msg: "deadline"})
	if _, ok := l.reuse([]byte("in")); ok {
		t.Fatal("the input that faulted reused the verdict before it")
	}
}

// describe's "deterministic" must be a boolean: anything else refuses the
// plugin at load rather than guessing.
func TestParseDescribeDeterministic(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want bool
		err  bool
	}{
		{`{"name":"x"}`, false, false},
		{`{"deterministic":null}`, false, false},
		{`{"deterministic":false}`, false, false},
		{`{"deterministic":true}`, true, false},
		{`{"deterministic":"yes"}`, false, true},
		{`{"deterministic":1}`, false, true},
	} {
		got, err := parseDescribeDeterministic([]byte(tc.out))
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: %v %v, want %v (error %v)", tc.out, got, err, tc.want, tc.err)
		}
	}
}

// trifecta and argguard declare their checks deterministic; secrets does
// not declare it.
func TestFirstPartyPluginsDeclareDeterministicChecks(t *testing.T) {
	rt := newRuntime(t, Options{})
	for name, want := range map[string]bool{"trifecta": true, "argguard": true, "secrets": false} {
		p := loadBuiltin(t, rt, name, nil)
		if p.Deterministic() != want {
			t.Errorf("%s: Deterministic() = %v, want %v", name, p.Deterministic(), want)
		}
	}
}

// FuzzParseDescribeDeterministic: any describe output either refuses the
// plugin or gives the answer encoding/json gives for a *bool, so that no
// spelling other than true turns reuse on.
func FuzzParseDescribeDeterministic(f *testing.F) {
	for _, s := range []string{`{"deterministic":true}`, `{"deterministic":"true"}`, `{"deterministic":1}`, `{}`, `{"deterministic":null}`, `{"Deterministic":true}`, `{"deterministic":true,"deterministic":false}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		got, err := parseDescribeDeterministic(out)
		var want struct {
			Deterministic *bool `json:"deterministic"`
		}
		if json.Unmarshal(out, &want) != nil {
			if got {
				t.Fatalf("%q: reuse on for output encoding/json refuses", out)
			}
			return
		}
		if err == nil && got != (want.Deterministic != nil && *want.Deterministic) {
			t.Fatalf("%q: %v, encoding/json says %v", out, got, want.Deterministic)
		}
	})
}
