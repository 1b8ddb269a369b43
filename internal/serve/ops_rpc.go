package serve

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// message is what the operations layer needs to know of a POST's JSON-RPC
// message: whether it asks for work (a request: a method and an id) and
// its id, to answer a refusal under that id.
type message struct {
	request bool
	id      json.RawMessage // nil when the message has none
}

// classify reads a POST body's method and id. A body that is not one
// JSON-RPC object counts as a request (it costs a parse and an answer like
// any other); a response (no method: a client's answer to an elicitation)
// and a notification (no id: a cancellation) do not, so that neither the
// rate limit nor a draining server ever drops a human's answer or a
// client's cancellation.
func classify(data []byte) message {
	var m struct {
		Method *string         `json:"method"`
		ID     json.RawMessage `json:"id"` // "null" when the id is null: present all the same
	}
	if json.Unmarshal(data, &m) != nil {
		return message{request: true}
	}
	var id json.RawMessage
	if validID(m.ID) {
		id = m.ID
	}
	notification := m.Method != nil && m.ID == nil
	response := m.Method == nil && m.ID != nil
	return message{request: !notification && !response, id: id}
}

// validID reports whether raw is a JSON-RPC id worth echoing: a string or
// a number (null and structures are answered with a null id).
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		_, err := strconv.ParseFloat(string(raw), 64)
		return err == nil
	}
	return false
}

// writeRPCError answers with an HTTP status and a JSON-RPC error body,
// so that an MCP client shows the message rather than a bare status.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
