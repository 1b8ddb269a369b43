package proxy

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// The client's stream has one reader: readMessage reads each message once,
// and everything the proxy does with it (serve a call, pass a request
// through, route an answer, refuse it, hand it to mcp-go) works from that
// one reading. mcp-go is never given the client's bytes: it gets the
// message as the reader read it, written again (see message.forMCPGo), so
// no second reader can take a message another way than the one that
// decided it.
//
// The reader matches keys exactly, as the upstream and the JavaScript and
// Python SDKs do. A key that encoding/json would take for a protocol key
// ("NAME" beside "name"), or a protocol key twice, makes the message
// ambiguous: it is refused (see intake.refuse), never read one way here
// and another way by a reader that folds case (mcp-go decodes what it
// serves with encoding/json, down to the capabilities of initialize).

// envelopeKeys are the members of a JSON-RPC message, in the order
// forMCPGo writes them.
var envelopeKeys = keySet{"jsonrpc", "id", "method", "params", "result", "error"}

// Indexes in envelopeKeys.
const (
	keyVersion = iota
	keyID
	keyMethod
	keyParams
	keyResult
	keyError
)

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

// message is one message from the client, as readMessage read it. Raw
// values are views of the line.
type message struct {
	line   []byte
	status rawjson.Status
	object bool // a JSON object: not a batch, not a bare value

	// The envelope's members (envelopeKeys), raw; nil when absent.
	members [6][]byte
	method  string // the method, when it is a string

	// The params members the proxy reads, raw; nil when absent.
	arguments, inputResponses, requestID, level, capabilities []byte
	name, requestState                                        string
	// The _meta members it reads.
	progress        []byte
	protocolVersion string
	// clientVersion is an initialize request's params.protocolVersion,
	// when it is a string: the version the client asks for.
	clientVersion string
	hasCaps       bool   // io.modelcontextprotocol/clientCapabilities is an object
	elicit        []byte // its elicitation member

	top, params, meta keyCheck
	// typeFault names the first member the call path reads whose JSON
	// type it cannot take (say, a name that is a number), or "".
	typeFault string
}

// readMessage reads one line from the client (see message.read).
func readMessage(line []byte) *message {
	m := new(message)
	m.read(line)
	return m
}

// read reads one line from the client into m: its validity and depth, and
// the members of its envelope, params and params._meta, each key once and
// exactly. A message that is only too deep has its envelope read (to
// answer it with its id), nothing more. The intake reuses one message, so
// that reading costs a call no allocation.
func (m *message) read(line []byte) {
	*m = message{line: line, status: rawjson.Check(line)}
	if m.status == rawjson.Invalid {
		return
	}
	m.top.set = envelopeKeys
	m.object = rawjson.Members(line, func(k, v []byte) bool {
		if i := m.top.key(k); i >= 0 {
			m.members[i] = v
		}
		return true
	})
	m.method = methodName(m.members[keyMethod])
	if !m.object || m.status != rawjson.OK {
		return
	}
	if v := m.members[keyVersion]; v != nil && rawjson.Kind(v) != '"' {
		m.fault(`"jsonrpc" must be a string`)
	}
	m.readParams(m.members[keyParams])
}

// methodName decodes a raw method that is a string, or is "". The methods
// the proxy looks for are not copied.
func methodName(raw []byte) string {
	if rawjson.Kind(raw) != '"' {
		return ""
	}
	switch string(raw) {
	case `"tools/call"`:
		return string(mcp.MethodToolsCall)
	case `"tools/list"`:
		return string(mcp.MethodToolsList)
	case `"notifications/cancelled"`:
		return string(mcp.MethodNotificationCancelled)
	case `"ping"`:
		return string(mcp.MethodPing)
	}
	s, _ := rawjson.String(raw)
	return s
}

// fault records the first type fault.
func (m *message) fault(what string) {
	if m.typeFault == "" {
		m.typeFault = what
	}
}

// readParams reads the params members the proxy reads.
func (m *message) readParams(v []byte) {
	switch rawjson.Kind(v) {
	case 0, 'n':
		return
	case '{':
	default:
		m.fault("params must be an object")
		return
	}
	m.params.set = paramKeys
	rawjson.Members(v, func(k, v []byte) bool {
		switch m.params.key(k) { // indexes in paramKeys
		case 0:
			m.setString(&m.name, v, "params.name")
		case 1:
			m.arguments = v
		case 2:
			m.readMeta(v)
		case 3:
			m.setString(&m.requestState, v, "params.requestState")
		case 4:
			m.inputResponses = v
		case 11:
			m.level = v
		case 12:
			if rawjson.Kind(v) == '"' {
				m.clientVersion, _ = rawjson.String(v)
			}
		case 13:
			m.capabilities = v
		case 15:
			m.requestID = v
		}
		return true
	})
}

// readMeta reads the params._meta members the proxy reads.
func (m *message) readMeta(v []byte) {
	switch rawjson.Kind(v) {
	case 'n':
		return
	case '{':
	default:
		m.fault("params._meta must be an object")
		return
	}
	m.meta.set = metaKeys
	rawjson.Members(v, func(k, v []byte) bool {
		switch m.meta.key(k) { // indexes in metaKeys
		case 0:
			m.progress = v
		case 1:
			m.setString(&m.protocolVersion, v, "params._meta[\"io.modelcontextprotocol/protocolVersion\"]")
		case 2:
			m.readCaps(v)
		}
		return true
	})
}

// readCaps reads a 2026-07-28 request's client capabilities, of which the
// call path needs only elicitation.
func (m *message) readCaps(v []byte) {
	switch rawjson.Kind(v) {
	case 'n':
		return
	case '{':
	default:
		m.fault("the client capabilities in params._meta must be an object")
		return
	}
	m.hasCaps = true
	rawjson.Members(v, func(k, v []byte) bool {
		if rawjson.KeyIs(k, "elicitation") {
			m.elicit = v
		}
		return true
	})
}

// setString decodes a string member (null leaves it as it was, as
// encoding/json does); any other type is a fault.
func (m *message) setString(dst *string, v []byte, what string) {
	switch rawjson.Kind(v) {
	case 'n':
	case '"':
		*dst, _ = rawjson.String(v)
	default:
		m.fault(what + " must be a string")
	}
}

// id is the raw id; nil when absent.
func (m *message) id() []byte { return m.members[keyID] }

// isRequest: a method that is not null (with an id, a request; without,
// a notification).
func (m *message) isRequest() bool {
	v := m.members[keyMethod]
	return v != nil && rawjson.Kind(v) != 'n'
}

// isAnswer: no method, and a result or an error.
func (m *message) isAnswer() bool {
	return !m.isRequest() && (m.members[keyResult] != nil || m.members[keyError] != nil)
}

// isCall: a tools/call request (the id aside).
func (m *message) isCall() bool {
	return m.method == string(mcp.MethodToolsCall) && m.id() != nil
}

// keyProblem says what is wrong with the keys of the envelope (where is
// "the message") or of params and params._meta (where is "params"), or "".
func (m *message) keyProblem(where string) string {
	if where == "the message" {
		return m.top.problem(where)
	}
	if bad := m.params.problem("params"); bad != "" {
		return bad
	}
	return m.meta.problem("params._meta")
}

// call is a tools/call as the call path takes it, when the message is
// one: a request with an allowed id whose members have the types the
// call's reader takes, naming a tool. The message's keys must have been
// found unambiguous (see intake.refuse).
func (m *message) call(r *callRequest) bool {
	if !m.isCall() || !rawjson.IsID(m.id()) || m.typeFault != "" || m.name == "" {
		return false
	}
	*r = callRequest{ID: json.RawMessage(m.id()), Name: m.name, Arguments: m.arguments, RequestState: m.requestState, InputResponses: m.inputResponses}
	if len(m.progress) > 0 && string(m.progress) != "null" {
		r.Progress = m.progress
	}
	if mcp.IsModernProtocol(m.protocolVersion) {
		r.Modern = true
		if m.hasCaps && len(m.elicit) > 0 && string(m.elicit) != "null" {
			var ec mcp.ElicitationCapability
			r.Elicit = json.Unmarshal(m.elicit, &ec) == nil && formMode(&ec)
		}
	}
	if string(r.InputResponses) == "null" {
		r.InputResponses = nil
	}
	return true
}

// forMCPGo is the message as mcp-go is given it: the envelope the reader
// read, written again with exactly its keys and nothing else, around the
// raw values (params, whose protocol keys the reader found unambiguous,
// among them).
func (m *message) forMCPGo() []byte {
	out := make([]byte, 0, len(m.line)+16)
	out = append(out, '{')
	for i, v := range m.members {
		if v == nil {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, envelopeKeys[i]...)
		out = append(out, `":`...)
		out = append(out, v...)
	}
	return append(out, "}\n"...)
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
