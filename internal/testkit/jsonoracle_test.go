package testkit_test

import (
	"testing"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// The oracles say exactly what encoding/json would lose or confuse.
func TestTheJSONOraclesFindWhatEncodingJSONLoses(t *testing.T) {
	for in, want := range map[string][2]bool{
		`{"a":"\ud83d\ude00"}`: {false, false}, // a pair is a character
		`{"a":"\ud83d"}`:       {true, false},  // a high surrogate alone
		`{"a":"\ude00x"}`:      {true, false},  // a low one alone
		`{"a":"\\ud83d"}`:      {false, false}, // an escaped backslash, no escape
		`{"Path":1,"path":2}`:  {false, true},
		`{"a":{"K":1},"k":2}`:  {false, false}, // different objects
		`[{"x":1},{"X":2}]`:    {false, false},
		`{"ſ":1,"S":2}`:        {false, true}, // long s folds to S
	} {
		if got := testkit.LoneSurrogate([]byte(in)); got != want[0] {
			t.Errorf("LoneSurrogate(%s) = %v, want %v", in, got, want[0])
		}
		if got := testkit.FoldClash([]byte(in)); got != want[1] {
			t.Errorf("FoldClash(%s) = %v, want %v", in, got, want[1])
		}
	}
}
