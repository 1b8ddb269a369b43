package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func TestRenameToolKeepsEveryOtherByte(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, name, want string }{
		{`{"name":"echo","inputSchema":{"type":"object"}}`, "s__echo", `{"name":"s__echo","inputSchema":{"type":"object"}}`},
		{`{"description":"name: x", "name" : "echo" ,"annotations":{"name":"not me"}}`, "s__echo", `{"description":"name: x", "name" : "s__echo" ,"annotations":{"name":"not me"}}`},
		{`{"inputSchema":{"properties":{"name":{"type":"string"}}},"name":"a\u00e9"}`, "s__aé", `{"inputSchema":{"properties":{"name":{"type":"string"}}},"name":"s__aé"}`},
	}
	for _, tc := range cases {
		got, err := renameTool(json.RawMessage(tc.in), tc.name)
		if err != nil || string(got) != tc.want {
			t.Errorf("renameTool(%s):\n got %s (%v)\nwant %s", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{`[]`, `{"title":"no name"}`, `{"name":`} {
		if _, err := renameTool(json.RawMessage(bad), "x"); err == nil {
			t.Errorf("renameTool(%s): want an error", bad)
		}
	}
}

func TestParseCall(t *testing.T) {
	t.Parallel()
	modern := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"m":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
	r, ok := parseCall([]byte(modern))
	if !ok || string(r.ID) != "7" || r.Name != "echo" || string(r.Arguments) != `{"m":"x"}` || !r.Modern || !r.Elicit {
		t.Fatalf("modern: %+v %v", r, ok)
	}
	legacy := `{"method":"tools/call","params":{"name":"echo","requestState":"s","inputResponses":{"a":{}}},"jsonrpc":"2.0","id":"x"}`
	r, ok = parseCall([]byte(legacy))
	if !ok || string(r.ID) != `"x"` || r.Modern || r.RequestState != "s" || len(r.InputResponses) == 0 {
		t.Fatalf("legacy: %+v %v", r, ok)
	}
	noElicit := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	if r, ok = parseCall([]byte(noElicit)); !ok || !r.Modern || r.Elicit {
		t.Fatalf("modern without elicitation: %+v", r)
	}
	for _, notACall := range []string{
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"e"}}`,             // a notification
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"e"}}`,   // null id
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}`,               // params not an object
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}`,  // no name
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,                            // another method
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"\"tools/call\""}]}}`, // a response mentioning it
		`garbage "tools/call"`, // not JSON
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e"}}]`, // a batch
	} {
		if _, ok := parseCall([]byte(notACall)); ok {
			t.Errorf("parseCall(%s) = ok", notACall)
		}
	}
}

func TestWithResultType(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"content":[]}`:                        `{"resultType":"complete","content":[]}`,
		` {}`:                                   `{"resultType":"complete"}`,
		`{"resultType":"input_required","x":1}`: `{"resultType":"input_required","x":1}`,
		`[1]`:                                   `[1]`,
	}
	for in, want := range cases {
		if got := string(withResultType(json.RawMessage(in))); got != want {
			t.Errorf("withResultType(%s) = %s, want %s", in, got, want)
		}
		if !json.Valid(withResultType(json.RawMessage(in))) {
			t.Errorf("withResultType(%s) is not JSON", in)
		}
	}
}

func TestIDKey(t *testing.T) {
	t.Parallel()
	if idKey(json.RawMessage(`1`)) != idKey(json.RawMessage(`1.0`)) {
		t.Error("1 and 1.0 are one id")
	}
	if idKey(json.RawMessage(`1`)) == idKey(json.RawMessage(`"1"`)) {
		t.Error(`1 and "1" are two ids`)
	}
}

// An oversized message is answered with its own id, wherever the client
// put it, and never buffered whole.
func TestIntakeRefusesOversizedMessages(t *testing.T) {
	t.Parallel()
	p := New(nil, nil, Defaults().WithMaxArgumentBytes(1000))
	var out bytes.Buffer
	o := newOutput(&out, p)
	big := strings.Repeat("x", 200_000)
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":"front","method":"tools/call","params":{"name":"e","arguments":{"id":"decoy","s":"` + big + `"}}}`,
		`{"method":"tools/call","params":{"name":"e","arguments":{"id":"decoy","s":"` + big + `"}},"jsonrpc":"2.0","id":42}`,
		`{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"` + big + `"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}, "\n") + "\n"
	in := newIntake(strings.NewReader(input), o, p)
	var passed []string
	for {
		line, err := in.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		passed = append(passed, string(line))
	}
	if len(passed) != 1 || !strings.Contains(passed[0], `"ping"`) {
		t.Fatalf("passed on: %q", passed)
	}
	type answer struct {
		ID     json.RawMessage `json:"id"`
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct{ Code int } `json:"error"`
	}
	var answers []answer
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a answer
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("answer is not JSON: %s", l)
		}
		answers = append(answers, a)
	}
	if len(answers) != 3 {
		t.Fatalf("want 3 answers, got %s", out.String())
	}
	want := []string{`"front"`, `42`, `9`}
	for i, a := range answers {
		if string(a.ID) != want[i] {
			t.Errorf("answer %d has id %s, want %s", i, a.ID, want[i])
		}
	}
	if answers[0].Result == nil || !answers[0].Result.IsError || answers[1].Result == nil || !answers[1].Result.IsError {
		t.Error("an oversized tools/call should get a tool error")
	}
	if answers[2].Error == nil {
		t.Error("an oversized other request should get a JSON-RPC error")
	}
}

// Output only ever writes whole lines, and rewrites the tools of a noted
// tools/list answer without touching anything else.
func TestOutputWritesWholeLines(t *testing.T) {
	t.Parallel()
	p := New(nil, nil, Defaults())
	var out bytes.Buffer
	o := newOutput(&out, p)
	_, _ = o.Write([]byte(`{"jsonrpc":"2.0","id":1,`))
	if out.Len() != 0 {
		t.Fatal("a partial line was written")
	}
	_, _ = o.Write([]byte(`"result":{}}` + "\n" + `{"jsonrpc":"2.0",`))
	_, _ = o.Write([]byte(`"id":2,"result":{}}` + "\n"))
	if got := out.String(); got != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"+`{"jsonrpc":"2.0","id":2,"result":{}}`+"\n" {
		t.Fatalf("got %q", got)
	}
}

func FuzzParseCall(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{}}}`))
	f.Add([]byte(`{"id":"a","method":"tools/call","params":{"name":"e","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, ok := parseCall(line)
		if ok && (r.Name == "" || len(r.ID) == 0) {
			t.Fatalf("accepted a call without name or id: %q", line)
		}
	})
}

func FuzzRenameTool(f *testing.F) {
	f.Add([]byte(`{"name":"echo","inputSchema":{}}`), "s__echo")
	f.Fuzz(func(t *testing.T, raw []byte, name string) {
		out, err := renameTool(raw, name)
		if err != nil {
			return
		}
		var v struct{ Name string }
		if json.Unmarshal(out, &v) != nil {
			t.Fatalf("renamed definition is not JSON: %q -> %q", raw, out)
		}
	})
}
