package pdk

import "testing"

// A list handler reads each tool's effective hints (what a check will see)
// apart from the hints the server declared.
func TestListToolHasEffectiveAndDeclaredHints(t *testing.T) {
	p := &Plugin{Name: "n", Version: "1",
		List: func(l *List) []string {
			var hide []string
			l.Tools(func(t ListTool) bool {
				eff, _ := t.Hints.Get("readOnlyHint")
				declared, _ := t.DeclaredHints.Get("readOnlyHint")
				if declared && !eff { // claims read-only, not trusted to be
					hide = append(hide, t.Name)
				}
				return true
			})
			return hide
		}}
	code, out := p.Handle(EventList, []byte(`{"tools":[`+
		`{"name":"a","hints":{"readOnlyHint":false},"declared_hints":{"readOnlyHint":true}},`+
		`{"name":"b","hints":{"readOnlyHint":true},"declared_hints":{"readOnlyHint":true}}]}`))
	if code != CodeOK || string(out) != `{"hide":["a"]}` {
		t.Errorf("%d %s", code, out)
	}
}
