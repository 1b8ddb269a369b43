package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// Asks that respect the client: wrap keeps a client that resets its
// timeout on progress waiting, and an answer given after the client gave
// up reaches the identical retry.

// inboxWrap starts wrap (approval_channel = "inbox", a private rendezvous
// directory) in front of the test server for a raw client.
func inboxWrap(t *testing.T, extra ...string) (*rawClient, string) {
	t.Helper()
	rv := filepath.Join(t.TempDir(), "rv")
	if err := os.Mkdir(rv, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, "inbox.toml", "approval_channel = \"inbox\"\n")
	args := wrapArgs(t, "ts", []string{cfg}, testServer, "-state", t.TempDir())
	args = append(append([]string{args[0]}, extra...), args[1:]...)
	c := startRaw(t, "env", append([]string{inbox.EnvRuntimeDir + "=" + rv, twBin}, args...)...)
	c.initialize("")
	return c, rv
}

// begin sends a request without waiting for its response, which arrives
// on the channel returned.
func (c *rawClient) begin(method string, params any) (id string, res <-chan rawMessage) {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id = fmt.Sprint(c.next)
	ch := make(chan rawMessage, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	p, err := json.Marshal(params)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, p))
	return id, ch
}

// oneAsk waits for the one ask in rv whose arguments show what.
func oneAsk(t *testing.T, rv, what string) inbox.Ask {
	t.Helper()
	var got []inbox.Ask
	eventually(t, 20*time.Second, "the ask about "+what+" in the inbox", func() bool {
		asks, _ := inbox.List(rv)
		got = got[:0]
		for _, a := range asks {
			if strings.Contains(a.Arguments, what) {
				got = append(got, a)
			}
		}
		return len(got) > 0
	})
	if len(got) != 1 {
		t.Fatalf("%d asks about %s, want 1: %+v", len(got), what, got)
	}
	return got[0]
}

func writeCall(what string) map[string]any {
	return map[string]any{"name": "write", "arguments": map[string]any{"what": what}}
}

func awaitCall(t *testing.T, ch <-chan rawMessage, within time.Duration) callResult {
	t.Helper()
	select {
	case m := <-ch:
		return decodeCall(t, m)
	case <-time.After(within):
		t.Fatalf("no response within %s", within)
	}
	return callResult{}
}

// While an ask waits in the inbox, a call that carries a progress token
// gets notifications/progress for it, with rising progress, and nothing
// for a token it did not give.
func TestAWaitingAskSendsProgressForTheCallsToken(t *testing.T) {
	t.Parallel()
	c, rv := inboxWrap(t, "--approval-timeout", "2m")
	params := writeCall("p")
	params["_meta"] = map[string]any{"progressToken": "tok-7"}
	_, res := c.begin("tools/call", params)
	a := oneAsk(t, rv, `"p"`)
	var progress []rawMessage
	eventually(t, 30*time.Second, "two progress notifications", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		progress = progress[:0]
		for _, n := range c.notes {
			if n.Method == "notifications/progress" {
				progress = append(progress, n)
			}
		}
		return len(progress) >= 2
	})
	last := 0.0
	for _, n := range progress {
		var p struct {
			Token    any     `json:"progressToken"`
			Progress float64 `json:"progress"`
			Message  string  `json:"message"`
		}
		if err := json.Unmarshal(n.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.Token != "tok-7" || p.Progress <= last || !strings.Contains(p.Message, "approval") {
			t.Errorf("progress %s: want token tok-7, progress above %v, a message about the approval", n.Line, last)
		}
		last = p.Progress
	}
	respond(t, rv, a.ID, "allow_once")
	if r := awaitCall(t, res, 10*time.Second); r.IsError || r.Text != "wrote p" {
		t.Fatalf("call after the answer: %+v", r)
	}
	c.mu.Lock()
	n := len(c.notes)
	c.mu.Unlock()
	time.Sleep(11 * time.Second)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.notes[n:] {
		if m.Method == "notifications/progress" {
			t.Errorf("progress after the call was answered: %s", m.Line)
		}
	}
}

// An answer given in the inbox after the client cancelled the call applies
// to the identical retry, once; a second retry and a retry with other
// arguments are asked about.
func TestAnAnswerGivenAfterTheClientGaveUpAppliesToTheIdenticalRetryOnce(t *testing.T) {
	t.Parallel()
	c, rv := inboxWrap(t, "--approval-timeout", "2m")
	id, first := c.begin("tools/call", writeCall("late"))
	a := oneAsk(t, rv, `"late"`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"timed out"}}`)
	if r := awaitCall(t, first, 10*time.Second); !r.IsError {
		t.Fatalf("the cancelled call ran: %+v", r)
	}
	// The ask stays for the person to answer.
	time.Sleep(300 * time.Millisecond)
	if still := oneAsk(t, rv, `"late"`); still.ID != a.ID {
		t.Fatalf("the ask was replaced: %s, then %s", a.ID, still.ID)
	}
	respond(t, rv, a.ID, "allow_once")

	_, retry := c.begin("tools/call", writeCall("late"))
	if r := awaitCall(t, retry, 10*time.Second); r.IsError || r.Text != "wrote late" {
		t.Fatalf("the identical retry after the late answer: %+v", r)
	}
	if asks, _ := inbox.List(rv); len(asks) != 0 {
		t.Fatalf("the retry asked again: %+v", asks)
	}

	_, again := c.begin("tools/call", writeCall("late"))
	b := oneAsk(t, rv, `"late"`)
	respond(t, rv, b.ID, "deny")
	if r := awaitCall(t, again, 10*time.Second); !r.IsError || !strings.Contains(r.Text, "denied") {
		t.Fatalf("a second retry was not asked about: %+v", r)
	}

	// Cancelled, answered, then retried with other arguments: asked anew.
	id, other := c.begin("tools/call", writeCall("late2"))
	a = oneAsk(t, rv, `"late2"`)
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
	awaitCall(t, other, 10*time.Second)
	respond(t, rv, a.ID, "allow_once")
	_, diff := c.begin("tools/call", writeCall("late3"))
	b = oneAsk(t, rv, `"late3"`)
	respond(t, rv, b.ID, "deny")
	if r := awaitCall(t, diff, 10*time.Second); !r.IsError || !strings.Contains(r.Text, "denied") {
		t.Fatalf("a retry with other arguments took the answer: %+v", r)
	}
}

// The same while the client's own prompt is open (elicitation/create):
// progress for the call's token until the client answers the prompt.
func TestAnOpenElicitationPromptSendsProgressForTheCallsToken(t *testing.T) {
	t.Parallel()
	c := startRaw(t, twBin, wrapArgs(t, "ts", nil, testServer, "-state", t.TempDir())...)
	c.initialize(`{"elicitation":{}}`)
	params := writeCall("e")
	params["_meta"] = map[string]any{"progressToken": 42}
	_, res := c.begin("tools/call", params)
	var prompt rawMessage
	eventually(t, 20*time.Second, "the elicitation request and a progress notification", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.reqs) == 0 || c.reqs[0].Method != "elicitation/create" {
			return false
		}
		prompt = c.reqs[0]
		for _, n := range c.notes {
			if n.Method == "notifications/progress" && strings.Contains(string(n.Params), `"progressToken":42`) {
				return true
			}
		}
		return false
	})
	c.send(`{"jsonrpc":"2.0","id":` + string(prompt.ID) + `,"result":{"action":"accept","content":{"decision":"allow_once"}}}`)
	if r := awaitCall(t, res, 10*time.Second); r.IsError || r.Text != "wrote e" {
		t.Fatalf("call after the prompt was answered: %+v", r)
	}
}
