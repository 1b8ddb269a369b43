package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/channel"
)

// Protocol edges, replayed through the real binary in front of the real
// server-everything: a request a parser gives up on never leaves the
// client waiting, and never slips past policy; a message two readers would
// read differently is refused; answers match requests by exact id; and the
// upstream runs exactly what toolwarden judged.

// everythingWrap starts wrap in front of server-everything with an audit
// log, echo asked about ("prompt"), and a raw client that declared
// elicitation.
func everythingWrap(t *testing.T) (*rawClient, string) {
	t.Helper()
	every := npmServer(t, "mcp-server-everything")
	auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := writeFile(t, "wrap.toml", "[apps.everything.tools.\"echo\"]\napproval_mode = \"prompt\"\n")
	args := wrapArgs(t, "everything", []string{cfg}, every)
	c := startRaw(t, twBin, append([]string{args[0], "--audit", auditLog}, args[1:]...)...)
	c.initialize(`{"elicitation":{"form":{}}}`)
	return c, auditLog
}

// sendAwait writes one line and waits for the answer with this raw id.
func (c *rawClient) sendAwait(id, line string) rawMessage {
	c.t.Helper()
	ch := c.expect(id)
	c.send(line)
	return c.await(id, ch)
}

// checkedTools is the tool of every check in the audit log, in order.
func checkedTools(t *testing.T, auditLog string) []string {
	t.Helper()
	b, err := os.ReadFile(auditLog)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var tools []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Event    string
			Decision struct{ Tool string }
		}
		if json.Unmarshal([]byte(line), &r) == nil && r.Event == "check" {
			tools = append(tools, r.Decision.Tool)
		}
	}
	return tools
}

func TestAdversarialProtocolThroughWrap(t *testing.T) {
	t.Parallel()
	c, auditLog := everythingWrap(t)
	sum := func(step string) {
		t.Helper()
		r := decodeCall(t, c.call("tools/call", map[string]any{"name": "get-sum", "arguments": map[string]any{"a": 2, "b": 3}}))
		if r.IsError || !strings.Contains(r.Text, "5") {
			t.Fatalf("after %s the proxy does not serve: %+v", step, r)
		}
	}
	sum("start")

	t.Run("a call nested deeper than the parser reads is answered with its id", func(t *testing.T) {
		deep := strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001)
		for _, tc := range []struct{ id, line string }{
			{`"deep-first"`, `{"jsonrpc":"2.0","id":"deep-first","method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":` + deep + `}}}`},
			{`"deep-last"`, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":` + deep + `}},"id":"deep-last"}`},
		} {
			r := decodeCall(t, c.sendAwait(tc.id, tc.line))
			if !r.IsError || !strings.Contains(r.Text, "nested deeper") {
				t.Fatalf("%s: %+v", tc.id, r)
			}
		}
		m := c.sendAwait(`"deep-list"`, `{"jsonrpc":"2.0","id":"deep-list","method":"prompts/list","params":{"_meta":`+deep+`}}`)
		if m.Error == nil || m.Error.Code != -32600 {
			t.Fatalf("another request too deep: %s", m.Line)
		}
		sum("deep messages")
	})

	t.Run("a message that is not JSON is answered with the id it shows", func(t *testing.T) {
		m := c.sendAwait(`"broken"`, `{"jsonrpc":"2.0","id":"broken","method":"tools/call","params":{"name":"get-sum","arguments":{"a":}}`)
		if m.Error == nil || m.Error.Code != -32700 {
			t.Fatalf("%s", m.Line)
		}
		sum("a broken message")
	})

	t.Run("requests whose id MCP does not allow are refused with a null id", func(t *testing.T) {
		for _, id := range []string{`null`, `1.5`, `true`, `{"a":1}`, `2.0`, `2e0`, `9007199254740993`} {
			m := c.sendAwait("null", `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":1}}}`)
			if m.Error == nil || m.Error.Code != -32600 {
				t.Fatalf("id %s: %s", id, m.Line)
			}
		}
		sum("bad ids")
	})

	t.Run("a key that case-folds to a protocol key is refused, never read two ways", func(t *testing.T) {
		before := len(checkedTools(t, auditLog))
		for i, params := range []string{
			`{"name":"echo","NAME":"get-sum","arguments":{"message":"m","a":1,"b":2}}`,
			`{"NAME":"get-sum","arguments":{"a":1,"b":2}}`,
			`{"name":"echo","name":"get-sum","arguments":{"message":"m","a":1,"b":2}}`,
			`{"name":"get-sum","arguments":{"a":1,"b":2},"Arguments":{"a":5,"b":5}}`,
			`{"name":"get-sum","arguments":{"a":1,"b":2},"_meta":{"progressToken":1,"ProgressToken":2}}`,
		} {
			id := fmt.Sprintf(`"fold-%d"`, i)
			m := c.sendAwait(id, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":`+params+`}`)
			if m.Error == nil || m.Error.Code != -32600 {
				t.Fatalf("%s: %s", params, m.Line)
			}
		}
		m := c.sendAwait(`"fold-top"`, `{"jsonrpc":"2.0","id":"fold-top","method":"tools/list","METHOD":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":2}}}`)
		if m.Error == nil || m.Error.Code != -32600 {
			t.Fatalf("METHOD beside method: %s", m.Line)
		}
		if after := checkedTools(t, auditLog); len(after) != before {
			t.Fatalf("refused messages reached policy: %v", after[before:])
		}
		sum("case-folded keys")
	})

	t.Run("the upstream runs exactly what toolwarden judged", func(t *testing.T) {
		before := len(checkedTools(t, auditLog))
		// An escaped key is the key, for toolwarden as for the server.
		m := c.sendAwait(`"escaped"`, `{"jsonrpc":"2.0","id":"escaped","method":"tools/call","params":{"n\u0061me":"get-sum","arguments":{"\u0061":20,"b":22}}}`)
		if r := decodeCall(t, m); r.IsError || !strings.Contains(r.Text, "42") {
			t.Fatalf("escaped keys: %+v", r)
		}
		eventually(t, 5*time.Second, "the check in the audit log", func() bool { return len(checkedTools(t, auditLog)) > before })
		if got := checkedTools(t, auditLog)[before]; got != "get-sum" {
			t.Fatalf("toolwarden judged %q, the server ran get-sum", got)
		}
		// Arguments that readers read differently are denied, not run:
		// server-everything itself sums 1 and 2 for each of these (a Go
		// server decoding into a struct would take A for a).
		for _, args := range []string{`{"a":1,"A":5,"b":2}`, `{"a":1,"a":5,"b":2}`, `{"a":1,"b":2,"c":"\ud800"}`, `{"a":1,"b":2,"c":"\udfff"}`} {
			r := decodeCall(t, c.sendAwait(`"args"`, `{"jsonrpc":"2.0","id":"args","method":"tools/call","params":{"name":"get-sum","arguments":`+args+`}}`))
			if !r.IsError || !strings.Contains(r.Text, "denied") || strings.Contains(r.Text, "The sum") {
				t.Fatalf("arguments %s: %+v", args, r)
			}
		}
		sum("arguments readers disagree on")
	})

	t.Run("an elicitation answer matches its request by exact id", func(t *testing.T) {
		ch := c.expect(`"asked"`)
		c.send(`{"jsonrpc":"2.0","id":"asked","method":"tools/call","params":{"name":"echo","arguments":{"message":"approved?"}}}`)
		req := c.serverRequest("elicitation/create")
		var n int64
		if err := json.Unmarshal(req.ID, &n); err != nil {
			t.Fatalf("toolwarden's question has id %s, want an integer", req.ID)
		}
		allow := `"result":{"action":"accept","content":{"decision":"allow_once"}}}`
		// The same number as a string, or written as a fraction, is
		// another id: these answer nothing.
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"%d",%s`, n, allow))
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d.0,%s`, n, allow))
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%de0,%s`, n, allow))
		// The answer with the question's own id decides: deny.
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"action":"accept","content":{"decision":"deny"}}}`, n))
		r := decodeCall(t, c.await(`"asked"`, ch))
		if !r.IsError || !strings.Contains(r.Text, "denied") {
			t.Fatalf("an answer with id \"%d\" was taken for request %d: %+v", n, n, r)
		}
		eventually(t, 5*time.Second, "the other answers logged as dropped", func() bool {
			return strings.Count(c.log.String(), "dropped an answer") >= 3
		})
		sum("answers by id")
	})
}

// A signed approval state binds the exact arguments: through the binary,
// a state minted for one character is refused for another, a lone
// surrogate is never asked about (policy refuses it first), and the same
// arguments spelled another way still match.
func TestAdversarialApprovalStateBindsExactArguments(t *testing.T) {
	t.Parallel()
	every := npmServer(t, "mcp-server-everything")
	cfg := writeFile(t, "wrap.toml", "[apps.everything.tools.\"echo\"]\napproval_mode = \"prompt\"\n")
	c := startRaw(t, twBin, wrapArgs(t, "everything", []string{cfg}, every)...)
	meta, _ := json.Marshal(modernMeta(true))
	accept, _ := json.Marshal(map[string]any{channel.ElicitationID: map[string]any{"action": "accept", "content": map[string]any{"decision": "allow_once"}}})
	call := func(id, args, extra string) callResult {
		t.Helper()
		return decodeCall(t, c.sendAwait(id, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"echo","arguments":`+args+`,"_meta":`+string(meta)+extra+`}}`))
	}
	retry := func(state string) string {
		return `,"inputResponses":` + string(accept) + `,"requestState":"` + state + `"`
	}

	for _, lone := range []string{`{"message":"\ud800"}`, `{"message":"\udfff"}`} {
		if r := call("1", lone, ""); r.Asked || !r.IsError || !strings.Contains(r.Text, "lone surrogate") {
			t.Fatalf("%s: want a deny before any question, got %+v", lone, r)
		}
	}

	q := call("2", `{"message":"\ud83d\ude00"}`, "")
	if !q.Asked || q.State == "" {
		t.Fatalf("want a question, got %+v", q)
	}
	if r := call("3", `{"message":"\ud83d\ude01"}`, retry(q.State)); !r.IsError || !strings.Contains(r.Text, "arguments differ") {
		t.Fatalf("a state minted for U+1F600 redeemed for U+1F601: %+v", r)
	}

	q = call("4", `{"message":"\ud83d\ude00"}`, "")
	if r := call("5", `{ "message" : "😀" }`, retry(q.State)); r.IsError || r.Text != "Echo: 😀" {
		t.Fatalf("the same arguments, spelled another way: %+v", r)
	}
}
