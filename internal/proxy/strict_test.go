package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// screenProxy is a proxy with only what the screen touches: its output
// (to a buffer) and a log.
func screenProxy() (*Proxy, *bytes.Buffer) {
	var buf bytes.Buffer
	p := &Proxy{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	p.out = newOutput(&buf, p)
	return p, &buf
}

type answer struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func TestTheIntakeAnswersEveryRequestItCannotServe(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat(`{"a":`, rawjson.MaxDepth) + "1" + strings.Repeat("}", rawjson.MaxDepth)
	call := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`
	}
	const none = "" // consumed, no answer
	const pass = "pass"
	cases := []struct {
		name, line string
		id         string // the answer's id, none, or pass
		code       int    // JSON-RPC error code; 0: a tool error result
	}{
		{"a call nested too deep is answered with its id", call("7", `{"name":"echo","arguments":`+deep+`}`), `7`, 0},
		{"a call nested too deep with its id last", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":` + deep + `},"id":"z"}`, `"z"`, 0},
		{"another request nested too deep", `{"jsonrpc":"2.0","id":"a","method":"prompts/get","params":` + deep + `}`, `"a"`, -32600},
		{"a notification nested too deep is dropped", `{"jsonrpc":"2.0","method":"notifications/x","params":` + deep + `}`, none, 0},
		{"not JSON, the id readable before the error", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":}`, `4`, -32700},
		{"not JSON, no id", `this is not JSON`, `null`, -32700},
		{"a null id", call("null", `{"name":"echo"}`), `null`, -32600},
		{"a fractional id", call("1.5", `{"name":"echo"}`), `null`, -32600},
		{"an id written 2.0", call("2.0", `{"name":"echo"}`), `null`, -32600},
		{"an id written 2e0", call("2e0", `{"name":"echo"}`), `null`, -32600},
		{"a boolean id", call("true", `{"name":"echo"}`), `null`, -32600},
		{"an object id", call(`{"a":1}`, `{"name":"echo"}`), `null`, -32600},
		{"an id past 2^53", call("9007199254740993", `{"name":"echo"}`), `null`, -32600},
		{"a null id on another method", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `null`, -32600},
		{"a call whose name is also spelled NAME", call("8", `{"name":"echo","NAME":"get-sum"}`), `8`, -32600},
		{"a call that names its tool twice", call("9", `{"name":"echo","name":"get-sum"}`), `9`, -32600},
		{"a call with its arguments twice", call("10", `{"name":"echo","arguments":{},"arguments":{"x":1}}`), `10`, -32600},
		{"a call whose name is a number", call("17", `{"name":5}`), `17`, -32600},
		{"a call whose params are a string", call("18", `"echo"`), `18`, -32600},
		{"a call whose _meta is a list", call("19", `{"name":"echo","_meta":[]}`), `19`, -32600},
		{"a call that names no tool", call("20", `{"arguments":{}}`), `20`, -32602},
		{"a call without params", `{"jsonrpc":"2.0","id":21,"method":"tools/call"}`, `21`, -32602},
		{"a METHOD beside the method", `{"jsonrpc":"2.0","id":11,"method":"tools/list","METHOD":"tools/call","params":{"name":"e"}}`, `11`, -32600},
		{"an ID beside the id", `{"jsonrpc":"2.0","id":12,"ID":13,"method":"ping"}`, `null`, -32600},
		{"a case-folded progress token", call("14", `{"name":"echo","_meta":{"progressToken":1,"PROGRESSTOKEN":2}}`), `14`, -32600},
		{"a string answer nobody waits for", `{"jsonrpc":"2.0","id":"2","result":{"action":"accept"}}`, none, 0},
		{"an answer with a fractional id", `{"jsonrpc":"2.0","id":2.0,"result":{"action":"accept"}}`, none, 0},
		{"an answer with a null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, none, 0},
		{"an answer with a case-folded key", `{"jsonrpc":"2.0","id":2,"result":{},"RESULT":{}}`, none, 0},
		{"an integer answer goes on to mcp-go", `{"jsonrpc":"2.0","id":2,"result":{"action":"accept"}}`, pass, 0},
		{"a well-formed request goes on", `{"jsonrpc":"2.0","id":"p","method":"ping"}`, pass, 0},
		{"an escaped key is the key", `{"jsonrpc":"2.0","\u0069d":"p","method":"ping"}`, pass, 0},
		{"a notification goes on", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, pass, 0},
		{"a blank line is nothing", "  \r", none, 0},
		{"a method that is not a string", `{"jsonrpc":"2.0","id":15,"method":5}`, `15`, -32600},
		{"a version that is not a string", `{"jsonrpc":2,"id":16,"method":"ping"}`, `16`, -32600},
		{"a batch is refused", `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","NAME":"get-sum"}}]`, `null`, -32600},
		{"a bare value is refused", `"tools/call"`, `null`, -32600},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, buf := screenProxy()
			in := &intake{p: p, out: p.out}
			line := []byte(tc.line + "\n")
			m := readMessage(line)
			got := in.refuse(m)
			if tc.id == pass {
				if got != passOn || buf.Len() > 0 || m.isCall() {
					t.Fatalf("refuse = %v, wrote %q; want it passed on", got, buf)
				}
				return
			}
			if got != consumed {
				t.Fatal("passed on")
			}
			if tc.id == none {
				if buf.Len() > 0 {
					t.Fatalf("wrote %q, want nothing", buf)
				}
				return
			}
			var a answer
			if err := json.Unmarshal(buf.Bytes(), &a); err != nil || bytes.Count(buf.Bytes(), []byte("\n")) != 1 {
				t.Fatalf("wrote %q (%v), want one JSON-RPC answer", buf, err)
			}
			if string(a.ID) != tc.id {
				t.Fatalf("answered id %s, want %s: %s", a.ID, tc.id, buf)
			}
			switch {
			case tc.code == 0 && (a.Result == nil || !a.Result.IsError):
				t.Fatalf("want a tool error, got %s", buf)
			case tc.code != 0 && (a.Error == nil || a.Error.Code != tc.code):
				t.Fatalf("want error %d, got %s", tc.code, buf)
			}
		})
	}
}

func TestAnAnswerReachesOnlyTheRelayedRequestWithItsID(t *testing.T) {
	t.Parallel()
	p, buf := screenProxy()
	in := &intake{p: p, out: p.out}
	key, _ := rawjson.IDKey([]byte(`"toolwarden-relay-1"`))
	ch := make(chan relayAnswer, 1)
	p.down.waits = map[string]chan relayAnswer{key: ch}
	for _, other := range []string{`"toolwarden-relay-1 "`, `"toolwarden-relay-10"`, `"Toolwarden-relay-1"`} {
		if in.refuse(readMessage([]byte(`{"jsonrpc":"2.0","id":`+other+`,"result":{"x":1}}`))) != consumed || len(ch) > 0 {
			t.Fatalf("the answer with id %s was taken for toolwarden-relay-1", other)
		}
	}
	if in.refuse(readMessage([]byte(`{"jsonrpc":"2.0","id":"toolwarden\u002drelay-1","result":{"x":2}}`))) != consumed {
		t.Fatal("not consumed")
	}
	select {
	case a := <-ch:
		if string(a.result) != `{"x":2}` {
			t.Fatalf("delivered %s", a.result)
		}
	default:
		t.Fatal("an escaped spelling of the id is the id: the answer was not delivered")
	}
	if buf.Len() > 0 {
		t.Fatalf("answers are not answered: wrote %q", buf)
	}
}

func TestParseCallReadsKeysExactly(t *testing.T) {
	t.Parallel()
	r, ok := parseCall([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"echo","arguments":{"NAME":"x"}}}`))
	if !ok || r.Name != "echo" || string(r.Arguments) != `{"NAME":"x"}` {
		t.Fatalf("an escaped key is the key: %+v %v", r, ok)
	}
	for _, refused := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","NAME":"get-sum"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"get-sum"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"get-sum"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","Params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"name":"echo"}}`,
	} {
		if _, ok := parseCall([]byte(refused)); ok {
			t.Errorf("parseCall(%s) took it", refused)
		}
	}
}

// Whatever the client sends, the intake never panics, answers at most
// once, with an id that is null or allowed, and takes every tools/call it
// does not answer.
func FuzzRefuse(f *testing.F) {
	for _, s := range append(callSeeds,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"e"}}`,
		`{"jsonrpc":"2.0","id":"2","result":{}}`, `{"jsonrpc":"2.0","id":2,"result":{}}`,
		`{"id":1,"method":"tools/call","params":{"name":"e","NAME":"f"}}`,
		`{"id":4,"method":"tools/call","params":{"name":}`, `[[[[1]]]]`, ``) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		p, buf := screenProxy()
		in := &intake{p: p, out: p.out}
		m := readMessage(line)
		got := in.refuse(m)
		if got == passOn && m.isCall() {
			if !m.call(new(callRequest)) {
				t.Fatalf("a call passed on that the call path cannot take: %q", line)
			}
		}
		if buf.Len() == 0 {
			return
		}
		if got != consumed || bytes.Count(buf.Bytes(), []byte("\n")) != 1 {
			t.Fatalf("refuse(%q) = %v wrote %q", line, got, buf)
		}
		var a answer
		if err := json.Unmarshal(buf.Bytes(), &a); err != nil {
			t.Fatalf("refuse(%q) wrote %q: %v", line, buf, err)
		}
		if string(a.ID) != "null" && !rawjson.IsID(a.ID) {
			t.Fatalf("refuse(%q) answered with id %s", line, a.ID)
		}
	})
}

func TestAnOversizedMessageIsAnsweredOnlyWithAnIDMCPAllows(t *testing.T) {
	t.Parallel()
	p := New(nil, nil, Defaults().WithMaxArgumentBytes(1000))
	var out bytes.Buffer
	o := newOutput(&out, p)
	big := strings.Repeat("x", 200_000)
	cases := []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"e","arguments":{"s":"` + big + `"}}}`, `null`},
		{`{"method":"tools/call","params":{"name":"e","arguments":{"s":"` + big + `"}},"jsonrpc":"2.0","id":2e0}`, `null`},
		{`{"method":"tools/call","params":{"name":"e","arguments":{"s":"` + big + `"}},"id":9007199254740993}`, `null`},
		{`{"method":"tools/call","params":{"name":"e","arguments":{"s":"` + big + `"}},"id":-7}`, `-7`},
	}
	var input strings.Builder
	for _, tc := range cases {
		input.WriteString(tc.line + "\n")
	}
	in := newIntake(strings.NewReader(input.String()), o, p)
	for {
		if _, err := in.next(); err != nil {
			break
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("want %d answers, got %q", len(cases), out.String())
	}
	for i, l := range lines {
		var a answer
		if err := json.Unmarshal([]byte(l), &a); err != nil || string(a.ID) != cases[i].want {
			t.Errorf("answer %d: id %s (%v), want %s", i, a.ID, err, cases[i].want)
		}
	}
}

// A 2026-07-28 client reads "resultType" exactly; a result that has only
// "ResultType" still gets one.
func TestResultTypeIsLookedForByItsExactKey(t *testing.T) {
	t.Parallel()
	if got := string(withResultType(json.RawMessage(`{"ResultType":"x","content":[]}`))); got != `{"resultType":"complete","ResultType":"x","content":[]}` {
		t.Errorf("withResultType: %s", got)
	}
	if got := string(withResultType(json.RawMessage(`{"resultType":"input_required"}`))); got != `{"resultType":"input_required"}` {
		t.Errorf("withResultType kept nothing: %s", got)
	}
	if got := string(modernResult(json.RawMessage(`{"TTLMS":5,"CacheScope":"public","prompts":[]}`), true)); got != `{"resultType":"complete","ttlMs":0,"cacheScope":"private","TTLMS":5,"CacheScope":"public","prompts":[]}` {
		t.Errorf("modernResult: %s", got)
	}
}

// BenchmarkParseCall reads a typical call as the intake does (read, then
// take the call); encoding/json's validation of the same line is the
// baseline of the same run.
func BenchmarkParseCall(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello world, this is a message","n":[1,2,3,{"a":"b"}]},"_meta":{"progressToken":"t"}}}` + "\n")
	b.Run("parseCall", func(b *testing.B) {
		var (
			m message
			r callRequest
		)
		for b.Loop() {
			m.read(line)
			if m.keyProblem("the message") != "" || m.keyProblem("params") != "" || !m.call(&r) {
				b.Fatal("not a call")
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		for b.Loop() {
			if !json.Valid(line) {
				b.Fatal("not JSON")
			}
		}
	})
}
