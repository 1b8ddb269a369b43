package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// The proxy's stdio wire sits between the client and mcp-go's stdio server:
//
//   - intake is the one reader of the client's messages (message.go). It
//     bounds their size (answering an oversized message itself, so a huge
//     call never reaches mcp-go or policy), reads each message once, and
//     serves tools/call itself (read without decoding; arguments and
//     results relayed raw; mcp-go's path decodes a call five times and
//     re-encodes the result, which costs more than policy does), hands the
//     requests for prompts, resources and completions to goroutines that
//     forward them (see passthrough.go), and notes the IDs of tools/list
//     requests. Everything else goes to mcp-go, as the reader read it: the
//     handshake, ping, server/discover, the answers to our
//     elicitation/create requests.
//   - output serialises everything written to the client and, for those
//     IDs, replaces the "tools" of mcp-go's answer with the visible tools'
//     upstream definitions, byte for byte. mcp-go's mcp.Tool cannot carry a
//     definition faithfully (it drops schema keywords and unknown
//     annotations and reorders keys); everything else about the answer
//     (resultType, _meta, caching hints for 2026-07-28 clients) stays
//     mcp-go's.

// listWait bounds how long the first tools/list waits for upstreams that
// are still starting; a late upstream's tools then arrive with
// notifications/tools/list_changed.
const listWait = 10 * time.Second

// intake reads the client's messages (see pump).
type intake struct {
	br      *bufio.Reader
	out     *output
	p       *Proxy
	lineCap int
	waited  bool
	msg     message // the message being read (see message.read)
	// operating: the client has said it is initialized (see
	// Proxy.noteLifecycle); only until then is each message looked at for it.
	operating bool
}

func newIntake(r io.Reader, out *output, p *Proxy) *intake {
	return &intake{br: bufio.NewReaderSize(r, 64<<10), out: out, p: p, lineCap: p.opts.maxArgs + 64<<10}
}

// pump reads the client's messages until its input ends, serving what the
// proxy serves and writing the rest to mcp-go's side of the pipe, as the
// reader read it (see message.forMCPGo). The first message is read at
// once (see Proxy.heard); it is served once listening is closed.
func (in *intake) pump(pw *io.PipeWriter, listening <-chan struct{}) {
	first := true
	for {
		line, err := in.next()
		m := &in.msg
		m.read(line)
		if first {
			first = false
			in.p.heard(m)
			select {
			case <-listening:
			case <-in.p.runCtx.Done():
				pw.CloseWithError(in.p.runCtx.Err())
				return
			}
		}
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			pw.CloseWithError(err)
			return
		}
		if in.take(m) {
			continue
		}
		if _, err := pw.Write(m.forMCPGo()); err != nil {
			return // mcp-go stopped reading
		}
	}
}

// edge is how much of an oversized message is kept to find its id.
const edge = 4 << 10

// next returns the next message to hand to mcp-go, answering and skipping
// oversized ones.
func (in *intake) next() ([]byte, error) {
	for {
		var line, head, tail []byte
		total := 0
		var rerr error
		for {
			frag, err := in.br.ReadSlice('\n')
			total += len(frag)
			switch {
			case total <= in.lineCap:
				line = append(line, frag...)
			default:
				if head == nil {
					head = append([]byte(nil), line[:min(len(line), edge)]...)
					line = nil
				}
				tail = append(tail, frag...)
				if len(tail) > 2*edge {
					tail = append(tail[:0:0], tail[len(tail)-edge:]...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			rerr = err
			break
		}
		if total == 0 && rerr != nil {
			return nil, rerr
		}
		if head != nil {
			in.oversized(total, head, tail)
			if rerr != nil {
				return nil, rerr
			}
			continue
		}
		if rerr != nil && rerr != io.EOF {
			return nil, rerr
		}
		if len(line) > 0 && line[len(line)-1] != '\n' {
			line = append(line, '\n')
		}
		return line, nil
	}
}

// take serves a message the proxy serves, and reports false for one it
// leaves to mcp-go. What is malformed, too deep or ambiguous is answered
// first (refuse, strict.go), and the client's answers are routed by id (to
// the requests the proxy relayed, Proxy.relayAnswered, or on to mcp-go).
// tools/call is served by the proxy itself (see Proxy.dispatch), and so
// are the requests for prompts, resources and completions (Proxy.pass) and
// logging/setLevel (Proxy.setLevel); for tools/list the id is noted so
// that output can rewrite the answer; notifications/roots/list_changed
// goes to the upstreams too; notifications/cancelled also cancels the
// proxy's call or request.
func (in *intake) take(m *message) bool {
	if !in.operating {
		in.operating = in.p.noteLifecycle(m)
	}
	if in.refuse(m) == consumed {
		return true
	}
	if m.isCall() {
		c := &call{p: in.p}
		m.call(&c.req) // refuse answered every call it cannot take
		in.waitForUpstreams()
		in.p.dispatch(c)
		return true
	}
	if r, ok := passRequestOf(m); ok {
		in.p.pass(r)
		return true
	}
	switch m.method {
	case string(mcp.MethodSetLogLevel):
		if in.p.setLevel(m) {
			return true
		}
	case mcp.MethodNotificationRootsListChanged:
		in.p.rootsChanged()
	case string(mcp.MethodNotificationCancelled):
		if len(m.requestID) > 0 {
			in.p.cancelCall(m.requestID)
			in.p.cancelRequest(m.requestID)
		}
	}
	in.note(m)
	return false
}

var (
	// idPattern finds an id at an end of an oversized message: a string or
	// an integer followed by the end of its member (so 1.5 is no id 1).
	idPattern  = regexp.MustCompile(`"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)\s*[,}]`)
	callMethod = regexp.MustCompile(`"method"\s*:\s*"tools/call"`)
)

// note records a tools/list request's id, so output can rewrite the
// answer. The first tools/list or tools/call waits (up to listWait) for the
// upstreams to start, so that neither sees a partial list.
func (in *intake) note(m *message) {
	if strings.HasPrefix(m.method, "tools/") {
		in.waitForUpstreams()
	}
	if m.method == string(mcp.MethodToolsList) && m.id() != nil {
		in.out.expectList(idKey(m.id()))
	}
}

// waitForUpstreams waits, once, for the upstreams to start (see note).
func (in *intake) waitForUpstreams() {
	if in.waited {
		return
	}
	in.waited = true
	select {
	case <-in.p.started:
	case <-time.After(listWait):
	}
}

// oversized answers a message larger than the cap: a tool error for a
// tools/call (so the model reads why), a JSON-RPC error otherwise. The id
// is recovered from the message's ends: clients put it either before the
// params (mcp-go) or after them (the TypeScript SDK).
func (in *intake) oversized(total int, head, tail []byte) {
	id := json.RawMessage("null")
	if loc := idPattern.FindSubmatchIndex(head); loc != nil && !bytes.Contains(head[:loc[0]], []byte(`"params"`)) {
		id = json.RawMessage(head[loc[2]:loc[3]])
	} else if all := idPattern.FindAllSubmatchIndex(tail, -1); len(all) > 0 {
		loc := all[len(all)-1]
		id = json.RawMessage(tail[loc[2]:loc[3]])
	}
	if !rawjson.IsID(id) {
		id = json.RawMessage("null") // as for any request whose id is not one MCP allows
	}
	in.p.log.Warn("oversized message refused", "bytes", total, "limit", in.p.opts.maxArgs, "id", string(id))
	var resp []byte
	if callMethod.Match(head) || callMethod.Match(tail) {
		res := mcp.NewToolResultError(fmt.Sprintf("toolwarden: this call's message is %d bytes; the limit for arguments is %d bytes (toolwarden --max-arg-bytes). The call was not made.", total, in.p.opts.maxArgs))
		body, _ := json.Marshal(res)
		resp = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, body)
	} else {
		msg, _ := json.Marshal(fmt.Sprintf("message of %d bytes exceeds toolwarden's limit of %d bytes", total, in.lineCap))
		resp = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", id, mcp.INVALID_REQUEST, msg)
	}
	_, _ = in.out.Write(resp)
}

// idKey is a canonical form of a JSON-RPC id (1, 1.0 and "1" differ, 1 and
// 1.0 do not), matching how mcp-go echoes it.
func idKey(raw json.RawMessage) string {
	var id mcp.RequestId
	if err := json.Unmarshal(raw, &id); err != nil {
		return string(raw)
	}
	return id.String()
}

// output is the io.Writer mcp-go's stdio server writes to. Every write is
// serialised and only whole lines reach the client.
type output struct {
	p       *Proxy
	w       io.Writer
	mu      sync.Mutex
	partial []byte
	lists   map[string]struct{}
}

func newOutput(w io.Writer, p *Proxy) *output {
	return &output{w: w, p: p, lists: map[string]struct{}{}}
}

func (o *output) expectList(key string) {
	o.mu.Lock()
	o.lists[key] = struct{}{}
	o.mu.Unlock()
}

func (o *output) Write(b []byte) (int, error) {
	n := len(b)
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.partial) > 0 {
		b = append(o.partial, b...)
		o.partial = nil
	}
	i := bytes.LastIndexByte(b, '\n')
	if i < 0 {
		o.partial = append([]byte(nil), b...)
		return n, nil
	}
	complete, rest := b[:i+1], b[i+1:]
	if len(rest) > 0 {
		o.partial = append([]byte(nil), rest...)
	}
	if len(o.lists) > 0 {
		complete = o.rewrite(complete)
	}
	_, err := o.w.Write(complete)
	return n, err
}

// writeLine writes one whole line given in pieces, none copied, with no
// other write between them.
func (o *output) writeLine(parts ...[]byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, b := range parts {
		if _, err := o.w.Write(b); err != nil {
			return
		}
	}
}

// rewrite replaces the tools of the tools/list answers in chunk.
func (o *output) rewrite(chunk []byte) []byte {
	var out []byte
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		line := chunk[:i+1]
		chunk = chunk[i+1:]
		if nl, ok := o.rewriteList(line); ok {
			line = nl
		}
		out = append(out, line...)
	}
	return out
}

func (o *output) rewriteList(line []byte) ([]byte, bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "" || len(m.ID) == 0 {
		return nil, false
	}
	key := idKey(m.ID)
	if _, ok := o.lists[key]; !ok {
		return nil, false
	}
	delete(o.lists, key)
	if len(m.Result) == 0 {
		return nil, false // an error answer: pass it on
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(m.Result, &res) != nil {
		return nil, false
	}
	res["tools"] = o.p.visibleTools(context.Background())
	keys := make([]string, 0, len(res))
	for k := range res {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := make([]byte, 0, len(line)+len(res["tools"]))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, m.ID...)
	b = append(b, `,"result":{`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kq, _ := json.Marshal(k)
		b = append(b, kq...)
		b = append(b, ':')
		b = appendOneLine(b, res[k])
	}
	b = append(b, "}}\n"...)
	return b, true
}

// spansLines reports whether raw holds a line break, which a stdio
// message must not.
func spansLines(raw []byte) bool {
	return bytes.IndexByte(raw, '\n') >= 0 || bytes.IndexByte(raw, '\r') >= 0
}

// appendOneLine appends raw JSON, compacted only if it spans lines (which
// a stdio message must not).
func appendOneLine(b []byte, raw json.RawMessage) []byte {
	if spansLines(raw) {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) == nil {
			return append(b, buf.Bytes()...)
		}
	}
	return append(b, raw...)
}
