package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// Protocol strictness. Every message from the client is read once (see
// message.go), and before anything acts on it, refuse answers what is
// malformed, too deep or ambiguous, so that a message the reader gives up
// on is answered, never left hanging:
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
//     -32600. The reader matches keys exactly, as the upstream and the
//     JavaScript and Python SDKs do; mcp-go, which is handed the rest of
//     the protocol, decodes with encoding/json, which folds case. Refusing
//     such messages is what makes all of them read one message one way;
//   - a tools/call whose members the call path reads have other types than
//     it takes (a name that is a number): -32600, as mcp-go answers it; one
//     that names no tool: -32602;
//   - a batch or a bare value: -32600 with a null id;
//   - an answer (a response) goes only to a request with the same id, by
//     exact JSON type and value (rawjson.IDKey): the proxy's relayed
//     requests have string ids, mcp-go's have integer ids, and anything
//     else answers nothing and is dropped. (mcp-go reads ids through
//     json.Number, which would take the string "2" for its request 2.)

// screened is what refuse made of a message.
type screened uint8

const (
	passOn   screened = iota // a well-formed message: serve it
	consumed                 // answered, delivered or dropped here
)

// refuse answers, drops or routes a message that is not to be served
// (see the comment at the top of this file).
func (in *intake) refuse(m *message) screened {
	p := in.p
	switch m.status {
	case rawjson.Invalid:
		if len(bytes.TrimSpace(m.line)) == 0 {
			return consumed // a blank line is not a message
		}
		id, _ := rawjson.PeekID(m.line)
		p.protocolError(id, mcp.PARSE_ERROR, "toolwarden: the message is not valid JSON")
		return consumed
	case rawjson.TooDeep:
		return in.tooDeep(m)
	}
	if !m.object {
		// A batch (MCP removed JSON-RPC batching in 2025-06-18) or a bare
		// value: JSON-RPC's answer to what is not a request object.
		p.protocolError(nil, mcp.INVALID_REQUEST, "toolwarden: invalid request: a message must be one JSON-RPC object (MCP has no batches: send each request on its own line)")
		return consumed
	}
	if bad := m.keyProblem("the message"); bad != "" {
		if m.isAnswer() {
			p.log.Warn("dropped an answer from the client", "why", bad)
			return consumed
		}
		p.protocolError(m.replyID(), mcp.INVALID_REQUEST, "toolwarden: invalid request: "+bad)
		return consumed
	}
	if !m.isRequest() {
		if !m.isAnswer() {
			return passOn // neither a request nor an answer: mcp-go says so
		}
		return in.response(m)
	}
	return in.refuseRequest(m)
}

// replyID is the id to answer a refused message with: its own, unless the
// id itself is what is wrong (nil: null).
func (m *message) replyID() []byte {
	id := m.id()
	bad := m.top.bad
	if id == nil || !rawjson.IsID(id) || (bad != nil && (rawjson.KeyIs(bad, "id") || rawjson.KeyFolds(bad, "id"))) {
		return nil
	}
	return id
}

// refuseRequest is refuse for a request or a notification whose envelope
// is well-formed.
func (in *intake) refuseRequest(m *message) screened {
	p := in.p
	id := m.id()
	bad := m.keyProblem("params")
	switch {
	case id == nil:
		if bad != "" {
			p.log.Warn("dropped a notification from the client", "why", bad)
			return consumed
		}
		return passOn // a notification
	case rawjson.Kind(id) == 'n':
		p.protocolError(nil, mcp.INVALID_REQUEST, "toolwarden: invalid request: the id is null (MCP request ids are strings or integers, never null)")
	case !rawjson.IsID(id):
		p.protocolError(nil, mcp.INVALID_REQUEST, fmt.Sprintf("toolwarden: invalid request: the id %s is not a string or an integer within ±%d (MCP request ids are strings or integers)", clip(id), rawjson.MaxSafeInteger))
	case rawjson.Kind(m.members[keyMethod]) != '"' || (m.members[keyVersion] != nil && rawjson.Kind(m.members[keyVersion]) != '"'):
		p.protocolError(id, mcp.INVALID_REQUEST, `toolwarden: invalid request: "jsonrpc" and "method" must be strings`)
	case bad != "":
		p.protocolError(id, mcp.INVALID_REQUEST, "toolwarden: invalid request: "+bad)
	case m.isCall() && m.typeFault != "":
		p.protocolError(id, mcp.INVALID_REQUEST, "toolwarden: invalid request: in tools/call, "+m.typeFault)
	case m.isCall() && m.name == "":
		p.protocolError(id, mcp.INVALID_PARAMS, "toolwarden: invalid params: tools/call needs params.name, the name of the tool to call")
	default:
		return passOn
	}
	return consumed
}

// tooDeep answers a well-formed message nested deeper than any Go reader
// on the path reads: a request with its id (a tools/call with a tool
// error, so the model reads why), an answer to a relayed request with an
// error to the server that asked; anything else is dropped.
func (in *intake) tooDeep(m *message) screened {
	p := in.p
	why := fmt.Sprintf("nested deeper than %d levels, which toolwarden does not read", rawjson.MaxDepth)
	if !m.object {
		p.protocolError(nil, mcp.INVALID_REQUEST, "toolwarden: invalid request: the message is "+why)
		return consumed
	}
	id := m.id()
	key, idOK := rawjson.IDKey(id)
	switch {
	case !m.isRequest():
		if m.isAnswer() && idOK && key[0] == 's' {
			e := fmt.Appendf(nil, `{"code":%d,"message":%q}`, mcp.INVALID_REQUEST, "toolwarden: the client's answer is "+why)
			if p.relayAnswered(key, nil, e) {
				return consumed
			}
		}
		p.log.Warn("dropped an answer from the client", "why", "it is "+why)
	case id == nil:
		p.log.Warn("dropped a notification from the client", "why", "it is "+why)
	case !idOK:
		p.protocolError(nil, mcp.INVALID_REQUEST, "toolwarden: invalid request: the message is "+why)
	case m.method == string(mcp.MethodToolsCall):
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
func (in *intake) response(m *message) screened {
	id := m.id()
	key, ok := rawjson.IDKey(id)
	switch {
	case !ok:
		in.p.log.Warn("dropped an answer whose id is not a string or an integer", "id", clip(id))
		return consumed
	case key[0] == 'i':
		return passOn
	}
	rpcErr := m.members[keyError]
	if rawjson.Kind(rpcErr) == 'n' {
		rpcErr = nil
	}
	if !in.p.relayAnswered(key, m.members[keyResult], rpcErr) {
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
