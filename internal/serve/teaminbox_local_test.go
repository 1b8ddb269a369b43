package serve

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The team inbox answers for serve's callers, who all have a name: a
// "local" grant (the local front ends' calls) is no answer it can give,
// not even by an approver. It is refused with 400 and nothing is stored.
func TestTheTeamInboxRefusesALocalScope(t *testing.T) {
	t.Parallel()
	front, st := teamInboxFront(t, true)
	id := postTeamAsk(t, st, "deploy_app", "dana", [][]string{{"group:leads"}}, time.Now().Add(time.Hour))
	for _, scope := range []string{"local", "local:dana"} {
		code, body, _ := call(t, front, "lena-token", http.MethodPost, "/inbox/api/asks/"+id, `{"option":"always","scope":"`+scope+`"}`)
		if code != http.StatusBadRequest || !strings.Contains(body, scope) {
			t.Errorf("scope %q: %d %s, want 400 naming it", scope, code, body)
		}
	}
	if a, err := st.GetAsk(context.Background(), id); err != nil || a.Answer != nil {
		t.Fatalf("after the refusals the ask is %+v %v, want unanswered", a, err)
	}
	if _, page, _ := call(t, front, "", http.MethodGet, "/inbox/static/teaminbox.js", ""); !strings.Contains(page, `value: "team"`) || strings.Contains(page, `"local"`) {
		t.Error("the page's scope choices changed: it must offer team and never local")
	}
}
