package policy_test

import (
	"encoding/json"
	"testing"

	"github.com/toolwarden/toolwarden/internal/policy"
)

// The team inbox stores a decision's approver levels with its ask, and
// another replica checks an answerer against what it reads back: the
// stored levels must admit exactly whom the decision admits, for one level
// and for several, and give nothing back when the config names no one.
func TestStoredApproverLevelsAdmitExactlyWhomTheDecisionAdmits(t *testing.T) {
	t.Parallel()
	callers := []policy.Caller{
		{Name: "erin", Groups: []string{"leads"}},
		{Name: "carol"},
		{Name: "frank"},
		{Name: "alice"},
		{Name: "group:leads"},
		{Name: "erin", Groups: []string{"Leads"}},
		{},
	}
	for _, tc := range []struct {
		name, toml, tool string
		levels           int
	}{
		{"one level (the app's)", accessConfig, "deploy_app", 1},
		{"two levels (the app's and the tool's)", accessConfig + "[apps.deploy.tools.deploy_app]\napprovers = [\"group:leads\", \"frank\"]\n", "deploy_app", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decideAs(compileAccess(t, tc.toml), "deploy", accessTool(t, tc.tool), &policy.Caller{Name: "alice"})
			levels := d.ApproverLevels()
			if len(levels) != tc.levels {
				t.Fatalf("levels %v, want %d", levels, tc.levels)
			}
			b, err := json.Marshal(levels)
			if err != nil {
				t.Fatal(err)
			}
			var stored [][]string
			if err := json.Unmarshal(b, &stored); err != nil {
				t.Fatal(err)
			}
			for _, c := range callers {
				if got, want := policy.MayApproveLevels(stored, c), d.MayApprove(c); got != want {
					t.Errorf("stored levels admit %+v: %v, the decision: %v", c, got, want)
				}
			}
			// The levels are the holder's copy: writing into them changes
			// neither the decision nor the rules.
			levels[0][0] = "alice"
			if d.MayApprove(policy.Caller{Name: "alice"}) {
				t.Error("writing into ApproverLevels made alice an approver of the decision")
			}
			again := decideAs(compileAccess(t, tc.toml), "deploy", accessTool(t, tc.tool), &policy.Caller{Name: "alice"})
			if again.MayApprove(policy.Caller{Name: "alice"}) {
				t.Error("writing into ApproverLevels made alice an approver under the rules")
			}
		})
	}
	t.Run("no approvers named", func(t *testing.T) {
		d := decideAs(compileAccess(t, "[apps.deploy]\ngroups = [\"ops\"]\n"), "deploy", accessTool(t, "x"), &policy.Caller{Name: "dave", Groups: []string{"ops"}})
		if levels := d.ApproverLevels(); levels != nil {
			t.Errorf("levels %v, want none", levels)
		}
	})
}
