package proxy

import (
	"encoding/json"
	"testing"
)

func TestResourceRoutes(t *testing.T) {
	t.Parallel()
	r := newResourceRoutes([]string{"docs", "everything", "files"})
	r.setResources("everything", []string{"demo://resource/static/document/a.md", "shared://x"})
	r.setResources("docs", []string{"shared://x"})
	r.setTemplates("everything", []string{"demo://resource/dynamic/text/{id}", "demo://resource/dynamic/blob/{id}", "{+anything}", "{scheme}://host/x"})
	r.setTemplates("files", []string{"demo://{path}", "file:///srv/{+path}", "fixed://only-this"})

	cases := []struct{ uri, want, why string }{
		{"demo://resource/static/document/a.md", "everything", "a listed URI goes to the server that listed it"},
		{"shared://x", "docs", "a URI two servers list goes to the first in config order"},
		{"demo://resource/dynamic/text/7", "everything", "a URI under a template goes to the server with the longest matching prefix"},
		{"demo://resource/dynamic/text/", "everything", "the prefix alone matches"},
		{"demo://other/thing", "files", "a shorter template prefix still matches what the longer ones do not"},
		{"file:///srv/a/b.txt", "files", "a file template routes its paths"},
		{"file:///etc/passwd", "", "a URI outside every template is unknown"},
		{"fixed://only-this", "files", "a template without variables matches itself"},
		{"fixed://only-this/not", "", "and nothing longer"},
		{"secret://token=abc", "", "templates without a literal scheme route nothing"},
		{"demo://resource/static/document/b.md", "files", "an unlisted URI under a broad template goes to that template's server"},
		{"", "", "an empty URI is unknown"},
	}
	for _, tc := range cases {
		if got := r.route(tc.uri); got != tc.want {
			t.Errorf("route(%q) = %q, want %q: %s", tc.uri, got, tc.want, tc.why)
		}
	}

	// A new listing replaces the server's old one.
	r.setResources("everything", nil)
	r.setTemplates("files", nil)
	if got := r.route("demo://resource/static/document/a.md"); got != "" {
		t.Errorf("a URI no longer listed still routes to %q", got)
	}
	if got := r.route("file:///srv/a"); got != "" {
		t.Errorf("a template no longer listed still routes to %q", got)
	}
}

func TestPromptRoute(t *testing.T) {
	t.Parallel()
	servers := []string{"a", "a__b", "everything"}
	cases := []struct{ name, server, prompt string }{
		{"everything__args-prompt", "everything", "args-prompt"},
		{"a__x", "a", "x"},
		{"a__b__x", "a__b", "x"},
		{"everything__with__separator", "everything", "with__separator"},
		{"everything__", "", ""},
		{"nobody__x", "", ""},
		{"args-prompt", "", ""},
	}
	for _, tc := range cases {
		s, p, ok := promptRoute(servers, tc.name)
		if s != tc.server || p != tc.prompt || ok != (tc.server != "") {
			t.Errorf("promptRoute(%q) = %q %q %v, want %q %q", tc.name, s, p, ok, tc.server, tc.prompt)
		}
	}
}

func TestParsePassRequest(t *testing.T) {
	t.Parallel()
	r, ok := parsePassRequest([]byte(`{"jsonrpc":"2.0","id":"q","method":"resources/read","params":{"uri":"x://y","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	if !ok || string(r.id) != `"q"` || r.method != "resources/read" || !r.modern || string(r.params) != `{"uri":"x://y"}` {
		t.Fatalf("modern read (its protocol _meta is not the upstream's): %+v %s %v", r, r.params, ok)
	}
	r, ok = parsePassRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	if !ok || string(r.params) != `{"_meta":{"progressToken":7},"name":"p"}` {
		t.Fatalf("modern get keeps the rest of its _meta: %s", r.params)
	}
	legacy := `{"name":"p", "_meta":{"progressToken":7}}`
	if r, ok = parsePassRequest([]byte(`{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":` + legacy + `}`)); !ok || string(r.params) != legacy {
		t.Fatalf("legacy params are forwarded as sent: %s", r.params)
	}
	r, ok = parsePassRequest([]byte(`{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":null}`))
	if !ok || r.params != nil || r.modern {
		t.Fatalf("list with null params: %+v %v", r, ok)
	}
	for _, notPassed := range []string{
		`{"jsonrpc":"2.0","method":"resources/read","params":{"uri":"x"}}`,         // a notification
		`{"jsonrpc":"2.0","id":null,"method":"prompts/list"}`,                      // null id
		`{"jsonrpc":"2.0","id":1,"method":"resources/unknown"}`,                    // another method
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"prompts/"}}`, // mentions one
		`{"jsonrpc":"2.0","id":1,"result":{"method":"prompts/list"}}`,              // a response
		`{"jsonrpc":"2.0","id":1,"method":"prompts/list"`,                          // truncated
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	} {
		if r, ok := parsePassRequest([]byte(notPassed)); ok {
			t.Errorf("parsePassRequest(%s) = %+v", notPassed, r)
		}
	}
}

func TestModernResult(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in        string
		cacheable bool
		want      string
	}{
		{`{"resources":[]}`, true, `{"resultType":"complete","ttlMs":0,"cacheScope":"private","resources":[]}`},
		{`{}`, true, `{"resultType":"complete","ttlMs":0,"cacheScope":"private"}`},
		{`{"messages":[]}`, false, `{"resultType":"complete","messages":[]}`},
		{`{"resultType":"complete","ttlMs":5,"cacheScope":"public","x":1}`, true, `{"resultType":"complete","ttlMs":5,"cacheScope":"public","x":1}`},
		{` { "a" : 1 } `, false, `{"resultType":"complete","a" : 1 }`},
		{`[1]`, true, `[1]`},
	}
	for _, tc := range cases {
		got := modernResult(json.RawMessage(tc.in), tc.cacheable)
		if string(got) != tc.want {
			t.Errorf("modernResult(%s, %v) = %s, want %s", tc.in, tc.cacheable, got, tc.want)
		}
	}
}

func TestReplaceMember(t *testing.T) {
	t.Parallel()
	in := `{"ref":{"type":"ref/prompt","name":"s__p"},"argument":{"name":"a","value":"x"}}`
	ref, err := replaceMember(json.RawMessage(`{"type":"ref/prompt","name":"s__p"}`), "name", json.RawMessage(`"p"`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := replaceMember(json.RawMessage(in), "ref", ref)
	if want := `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"x"}}`; err != nil || string(out) != want {
		t.Fatalf("got %s (%v), want %s", out, err, want)
	}
	if _, err := replaceMember(json.RawMessage(`{"a":1}`), "ref", ref); err == nil {
		t.Fatal("a missing member: want an error")
	}
}

// The intake reads untrusted client lines: on any input it returns
// without panicking, and what it accepts is a request for one of the
// passed methods with a usable id, whose params (rewritten for a
// 2026-07-28 client) are still valid JSON.
func FuzzParsePassRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`,
		`{"jsonrpc":"2.0","id":"a","method":"resources/read","params":{"uri":"file:///x"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"p","arguments":{"a":"<b>"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","k":1}}}`,
		`{"jsonrpc":"2.0","id":null,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","method":"completion/complete","params":null}`,
		`{"id":3,"method":"resources/templates/list","params":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, ok := parsePassRequest(line)
		if !ok {
			return
		}
		if !passedMethods[r.method] {
			t.Fatalf("accepted method %q", r.method)
		}
		if len(r.id) == 0 || string(r.id) == "null" || !json.Valid(r.id) {
			t.Fatalf("accepted id %q", r.id)
		}
		if r.params != nil && !json.Valid(r.params) {
			t.Fatalf("params %q are not valid JSON", r.params)
		}
	})
}
