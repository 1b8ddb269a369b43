package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// Protocol strictness. Every message from the client that the call path
// (parseCall) does not take is screened here before anything else reads
// it, so that a message a reader gives up on is answered, never left
// hanging, and a message two readers would read differently reaches
// neither:
//
//   - not JSON: -32700, with the id if the start of the message shows one
//     (rawjson.PeekID), else null;
//   - nested deeper than rawjson.MaxDepth (encoding/json's limit, so
//     mcp-go's too): refused with its id, which is read without reading
//     the rest (a tools/call gets a tool error that says why);
//   - a request whose id is null, or not a string or an integer: -32600
//     with a null id (MCP allows strings and integers only; JSON-RPC
//     answers an unreadable id with null);
//   - a key that encoding/json would take for a protocol key but an exact
//     reader would not ("NAME" beside "name"), or a protocol key twice:
//     -32600. mcp-go decodes with encoding/json, which folds case; the
//     upstream, toolwarden's own readers and the JavaScript and Python
//     SDKs match keys exactly. Refusing such messages is what makes all of
//     them read one message one way;
//   - a batch or a bare value: -32600 with a null id;
//   - an answer (a response) goes only to a request with the same id, by
//     exact JSON type and value (rawjson.IDKey): the proxy's relayed
//     requests have string ids, mcp-go's have integer ids, and anything
//     else answers nothing and is dropped. (mcp-go reads ids through
//     json.Number, which would take the string "2" for its request 2.)
//
// Behind the screen, the Go readers that remain (mcp-go's, and the
// passthrough's reading of ids, methods and _meta) find no key at the
// levels they read that they could fold into a protocol key, so they read
// what an exact reader reads; what they read deeper (capabilities, an
// error's code) they re-encode before anything else sees it.

// envelopeKeys are the members of a JSON-RPC message.
var envelopeKeys = keySet{"jsonrpc", "id", "method", "params", "result", "error"}

// paramKeys are the params members that toolwarden or mcp-go read in the
// requests and notifications a client sends.
var paramKeys = keySet{
	"name", "arguments", "_meta", "requestState", "inputResponses", "task",
	"uri", "cursor", "ref", "argument", "context", "level",
	"protocolVersion", "capabilities", "clientInfo",
	"requestId", "reason", "progressToken", "progress", "total", "message",
}

// metaKeys are the _meta members that toolwarden or mcp-go read.
var metaKeys = keySet{
	"progressToken",
	"io.modelcontextprotocol/protocolVersion",
	"io.modelcontextprotocol/clientCapabilities",
	"io.modelcontextprotocol/clientInfo",
}

// keySet is the protocol keys of one object of a message (at most 64).
type keySet []string

// keyCheck follows the members of one object against a keySet: which
// protocol key each member is, and the first member that is a near miss
// (a case-folded protocol key) or a protocol key seen before.
type keyCheck struct {
	set  keySet
	seen uint64
	bad  []byte // the offending raw key
	dup  bool   // bad is a repeated key (else a near miss)
}

// key returns the index in the set of the protocol key k is, or -1.
func (c *keyCheck) key(k []byte) int {
	for i, name := range c.set {
		if rawjson.KeyIs(k, name) {
			if c.seen&(1<<i) != 0 && c.bad == nil {
				c.bad, c.dup = k, true
			}
			c.seen |= 1 << i
			return i
		}
	}
	if c.bad == nil {
		for _, name := range c.set {
			if rawjson.KeyFolds(k, name) {
				c.bad = k
				break
			}
		}
	}
	return -1
}

// problem says what is wrong with the object's keys, or "".
func (c *keyCheck) problem(where string) string {
	if c.bad == nil {
		return ""
	}
	if c.dup {
		return fmt.Sprintf("key %q appears twice in %s (readers disagree on which one counts)", c.bad, where)
	}
	return fmt.Sprintf("key %q in %s is not a protocol key: keys are case-sensitive (readers that fold case would take it for one)", c.bad, where)
}

// screened is what screen made of a message.
type screened uint8

const (
	passOn   screened = iota // a well-formed message: let the others read it
	consumed                 // answered, delivered or dropped here
)

// screen looks at a message the call path did not take (see the comment
// at the top of this file).
func (in *intake) screen(line []byte) screened {
	p := in.p
	switch rawjson.Check(line) {
	case rawjson.Invalid:
		if len(bytes.TrimSpace(line)) == 0 {
			return consumed // a blank line is not a message
		}
		id, _ := rawjson.PeekID(line)
		p.protocolError(id, mcp.PARSE_ERROR, "toolwarden: the message is not valid JSON")
		return consumed
	case rawjson.TooDeep:
		return in.tooDeep(line)
	}
	var (
		top                = keyCheck{set: envelopeKeys}
		id, method, params []byte
		version            []byte
		hasID, hasResponse bool
		paramsBad, metaBad string
	)
	if !rawjson.Members(line, func(k, v []byte) bool {
		switch top.key(k) { // indexes in envelopeKeys
		case 0: // jsonrpc
			version = v
		case 1: // id
			id, hasID = v, true
		case 2: // method
			method = v
		case 3: // params
			params = v
		case 4, 5: // result, error
			hasResponse = true
		}
		return true
	}) {
		// A batch (MCP removed JSON-RPC batching in 2025-06-18) or a bare
		// value: JSON-RPC's answer to what is not a request object.
		p.protocolError(nil, mcp.INVALID_REQUEST, "toolwarden: invalid request: a message must be one JSON-RPC object (MCP has no batches: send each request on its own line)")
		return consumed
	}
	isRequest := method != nil && rawjson.Kind(method) != 'n'
	if isRequest && rawjson.Kind(params) == '{' {
		pc := keyCheck{set: paramKeys}
		rawjson.Members(params, func(k, v []byte) bool {
			if pc.key(k) == 2 && rawjson.Kind(v) == '{' { // _meta, in paramKeys
				mc := keyCheck{set: metaKeys}
				rawjson.Members(v, func(k, _ []byte) bool { mc.key(k); return true })
				if metaBad == "" {
					metaBad = mc.problem("params._meta")
				}
			}
			return true
		})
		paramsBad = pc.problem("params")
	}
	// The id answers the request unless the id itself is what is wrong.
	idOK := hasID && rawjson.IsID(id) && (top.bad == nil || !(rawjson.KeyIs(top.bad, "id") || rawjson.KeyFolds(top.bad, "id")))
	replyID := []byte(nil)
	if idOK {
		replyID = id
	}
	if bad := top.problem("the message"); bad != "" {
		if !isRequest && hasResponse {
			p.log.Warn("dropped an answer from the client", "why", bad)
			return consumed
		}
		p.protocolError(replyID, mcp.INVALID_REQUEST, "toolwarden: invalid request: "+bad)
		return consumed
	}
	if !isRequest {
		if !hasResponse {
			return passOn // neither a request nor an answer: mcp-go says so
		}
		return in.response(line, id)
	}
	switch {
	case !hasID:
		if bad := paramsBad + metaBad; bad != "" {
			p.log.Warn("dropped a notification from the client", "why", bad)
			return consumed
		}
		return passOn // a notification
	case rawjson.Kind(id) == 'n':
		p.protocolError(nil, mcp.INVALID_REQUEST, "toolwarden: invalid request: the id is null (MCP request ids are strings or integers, never null)")
		return consumed
	case !idOK:
		p.protocolError(nil, mcp.INVALID_REQUEST, fmt.Sprintf("toolwarden: invalid request: the id %s is not a string or an integer within ±%d (MCP request ids are strings or integers)", clip(id), rawjson.MaxSafeInteger))
		return consumed
	case rawjson.Kind(method) != '"' || (version != nil && rawjson.Kind(version) != '"'):
		// mcp-go could not read it, and would answer with a null id.
		p.protocolError(id, mcp.INVALID_REQUEST, `toolwarden: invalid request: "jsonrpc" and "method" must be strings`)
		return consumed
	case paramsBad != "":
		p.protocolError(id, mcp.INVALID_REQUEST, "toolwarden: invalid request: "+paramsBad)
		return consumed
	case metaBad != "":
		p.protocolError(id, mcp.INVALID_REQUEST, "toolwarden: invalid request: "+metaBad)
		return consumed
	}
	return passOn
}

// tooDeep answers a well-formed message nested deeper than any Go reader
// on the path reads: a request with its id (a tools/call with a tool
// error, so the model reads why), an answer to a relayed request with an
// error to the server that asked; anything else is dropped.
func (in *intake) tooDeep(line []byte) screened {
	p := in.p
	why := fmt.Sprintf("nested deeper than %d levels, which toolwarden does not read", rawjson.MaxDepth)
	var id, method []byte
	hasID, answer := false, false
	if !rawjson.Members(line, func(k, v []byte) bool {
		switch {
		case rawjson.KeyIs(k, "id"):
			id, hasID = v, true
		case rawjson.KeyIs(k, "method"):
			method = v
		case rawjson.KeyIs(k, "result"), rawjson.KeyIs(k, "error"):
			answer = true
		}
		return true
	}) {
		p.protocolError(nil, mcp.INVALID_REQUEST, "toolwarden: invalid request: the message is "+why)
		return consumed
	}
	key, idOK := rawjson.IDKey(id)
	switch {
	case method == nil || rawjson.Kind(method) == 'n':
		if answer && idOK && key[0] == 's' {
			e := fmt.Appendf(nil, `{"code":%d,"message":%q}`, mcp.INVALID_REQUEST, "toolwarden: the client's answer is "+why)
			if p.relayAnswered(key, nil, e) {
				return consumed
			}
		}
		p.log.Warn("dropped an answer from the client", "why", "it is "+why)
	case !hasID:
		p.log.Warn("dropped a notification from the client", "why", "it is "+why)
	case !idOK:
		p.protocolError(nil, mcp.INVALID_REQUEST, "toolwarden: invalid request: the message is "+why)
	case isCallMethod(method):
		p.respond(&callRequest{ID: id}, made(toolError("toolwarden: this call's message is %s. The call was not made.", why)))
	default:
		p.protocolError(id, mcp.INVALID_REQUEST, "toolwarden: invalid request: the message is "+why)
	}
	return consumed
}

// response routes an answer from the client by its id: a string id to the
// proxy's relayed request with that id (Proxy.relayAnswered), an integer
// id on to mcp-go (whose requests, elicitation/create among them, have
// integer ids); anything else, and a string id nobody waits for, is
// dropped: it answers no request toolwarden sent.
func (in *intake) response(line, id []byte) screened {
	key, ok := rawjson.IDKey(id)
	switch {
	case !ok:
		in.p.log.Warn("dropped an answer whose id is not a string or an integer", "id", clip(id))
		return consumed
	case key[0] == 'i':
		return passOn
	}
	msg, _ := rawjson.ReadMessage(line)
	if !in.p.relayAnswered(key, msg.Result, msg.Error) {
		in.p.log.Warn("dropped an answer to a request toolwarden did not send (or no longer waits for)", "id", clip(id))
	}
	return consumed
}

// protocolError writes a JSON-RPC error for a request the proxy refuses;
// id nil is null.
func (p *Proxy) protocolError(id []byte, code int, message string) {
	if id == nil {
		id = []byte("null")
	}
	line := make([]byte, 0, len(message)+len(id)+64)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = append(line, id...)
	line = append(line, `,"error":{"code":`...)
	line = strconv.AppendInt(line, int64(code), 10)
	line = append(line, `,"message":`...)
	msg, _ := json.Marshal(message)
	line = append(line, msg...)
	line = append(line, "}}\n"...)
	_, _ = p.out.Write(line)
}

// hasMember reports whether the well-formed raw object obj has a member
// whose key is exactly key (as the client reading it will match it).
func hasMember(obj []byte, key string) bool {
	found := false
	rawjson.Members(obj, func(k, _ []byte) bool {
		found = rawjson.KeyIs(k, key)
		return !found
	})
	return found
}

// clip shortens a raw value for a log line or an error message.
func clip(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
