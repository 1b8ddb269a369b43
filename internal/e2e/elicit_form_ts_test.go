package e2e

import (
	"encoding/json"
	"testing"
)

// The approval form reaches the official TypeScript SDK client's
// elicitation handler with every option and its title. The SDK validates
// the request and keeps only the fields of the first schema shape that
// matches: a field with both enum and oneOf matched the deprecated
// enum/enumNames shape, so the handler never saw oneOf.
func TestTheApprovalFormReachesTheTypeScriptClientsHandlerWithTitledOptions(t *testing.T) {
	t.Parallel()
	res := runTS(t, true, []string{"allow_once"}, []tsStep{{Op: "call", Name: "write", Arguments: map[string]any{"what": "x"}}},
		twBin, "wrap", "--app", "ts", "--", testServer)
	if len(res.Asked) != 1 {
		t.Fatalf("asked %d times, want 1: %+v", len(res.Asked), res)
	}
	if len(res.Results) != 1 || res.Results[0].IsError || res.Results[0].Thrown != "" {
		t.Fatalf("the call allowed once did not run: %+v", res.Results)
	}
	props, _ := res.Asked[0].RequestedSchema["properties"].(map[string]any)
	field, _ := props["decision"].(map[string]any)
	raw, _ := json.Marshal(field)
	var got struct {
		Type  string `json:"type"`
		OneOf []struct {
			Const string `json:"const"`
			Title string `json:"title"`
		} `json:"oneOf"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"allow_once": "Allow once", "allow_session": "Allow for this session", "deny": "Deny"}
	seen := map[string]string{}
	for _, o := range got.OneOf {
		seen[o.Const] = o.Title
	}
	if got.Type != "string" || len(got.OneOf) < 3 {
		t.Fatalf("the handler got the decision field %s, want a string with titled oneOf options", raw)
	}
	for c, title := range want {
		if seen[c] != title {
			t.Errorf("option %s has title %q in the handler, want %q (field %s)", c, seen[c], title, raw)
		}
	}
}
