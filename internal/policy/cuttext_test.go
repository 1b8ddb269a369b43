package policy

import (
	"strings"
	"testing"
)

func TestCutTextLeavesShortTextAloneAndNamesWhatItCuts(t *testing.T) {
	if got := CutText("path = \"/tmp/x\"", 64); got != `path = "/tmp/x"` {
		t.Errorf("short text changed: %q", got)
	}
	long := strings.Repeat("é", 100) // 200 bytes
	got := CutText(long, 11)
	if !strings.HasPrefix(got, strings.Repeat("é", 5)+"… (190 of 200 bytes cut, sha256 ") || len(got) > 11+100 {
		t.Errorf("cut text %q", got)
	}
	if got := CutText("a\n\"b\"", 3); !strings.HasPrefix(got, `a\n…`) {
		t.Errorf("the cut part is not escaped as a prompt shows a value: %q", got)
	}
}
