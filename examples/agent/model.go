package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Model is where a language model plugs in: given the tools the agent may
// use and what happened so far, it picks the next tool call, or says it is
// done. This example has no model; a plan file or the human at the prompt
// stands in for one. A real model would turn tools into its tool schema,
// history into messages, and its tool-use reply into a Call.
type Model interface {
	Next(ctx context.Context, tools []Tool, history []Turn) (call Call, done bool, err error)
}

// Tool is one tool the agent may use, as its server defined it.
type Tool struct {
	Server string
	Def    mcp.Tool
}

// Call is one tool call the model asks for.
type Call struct {
	// Conversation names the conversation the call belongs to ("" is
	// "main"). Approvals and labels are per conversation.
	Conversation string          `json:"conversation,omitempty"`
	Server       string          `json:"server"`
	Tool         string          `json:"tool"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
}

// Turn is a call and what came of it.
type Turn struct {
	Call   Call
	Result *mcp.CallToolResult
	Err    error
}

// planModel replays a plan file: a JSON array of calls, or one call per
// line (JSON Lines; blank lines and lines starting with # are skipped).
type planModel struct {
	calls []Call
	next  int
}

func loadPlan(path string) (*planModel, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the plan: %w", err)
	}
	calls, err := parsePlan(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &planModel{calls: calls}, nil
}

func parsePlan(data []byte) ([]Call, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var calls []Call
		if err := json.Unmarshal(trimmed, &calls); err != nil {
			return nil, fmt.Errorf("the plan is not a JSON array of calls: %w", err)
		}
		for i, c := range calls {
			if c.Server == "" || c.Tool == "" {
				return nil, fmt.Errorf("call %d: server and tool are required", i+1)
			}
		}
		return calls, nil
	}
	var calls []Call
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var c Call
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			return nil, fmt.Errorf("line %d: %w (want {\"server\":...,\"tool\":...,\"arguments\":{...}})", n+1, err)
		}
		if c.Server == "" || c.Tool == "" {
			return nil, fmt.Errorf("line %d: server and tool are required", n+1)
		}
		calls = append(calls, c)
	}
	return calls, nil
}

func (p *planModel) Next(ctx context.Context, tools []Tool, history []Turn) (Call, bool, error) {
	if p.next >= len(p.calls) {
		return Call{}, true, nil
	}
	c := p.calls[p.next]
	p.next++
	return c, false, nil
}

// promptModel reads calls typed at the agent's prompt:
//
//	fs read_text_file {"path":"/tmp/notes.txt"}
//	@conv-2 fs write_file {"path":"/tmp/x","content":"hi"}
//
// An empty line or "quit" (or the end of input) ends the run.
type promptModel struct {
	in  *bufio.Reader
	out io.Writer
}

func (p *promptModel) Next(ctx context.Context, tools []Tool, history []Turn) (Call, bool, error) {
	for {
		fmt.Fprint(p.out, "> ")
		line, err := p.in.ReadString('\n')
		line = strings.TrimSpace(line)
		if line == "" || line == "quit" {
			if err != nil && !errors.Is(err, io.EOF) {
				return Call{}, true, err
			}
			return Call{}, true, nil
		}
		c, perr := parseTyped(line)
		if perr == nil {
			return c, false, nil
		}
		fmt.Fprintln(p.out, perr)
		if err != nil {
			return Call{}, true, nil
		}
	}
}

// parseTyped reads "[@conversation] server tool [arguments-json]".
func parseTyped(line string) (Call, error) {
	var c Call
	if strings.HasPrefix(line, "@") {
		conv, rest, _ := strings.Cut(line[1:], " ")
		c.Conversation, line = conv, strings.TrimSpace(rest)
	}
	fields := strings.SplitN(line, " ", 3)
	if len(fields) < 2 {
		return c, errors.New(`type: [@conversation] <server> <tool> [{"arg":"value"}]`)
	}
	c.Server, c.Tool = fields[0], fields[1]
	if len(fields) == 3 {
		args := strings.TrimSpace(fields[2])
		if !json.Valid([]byte(args)) {
			return c, fmt.Errorf("the arguments are not JSON: %s", args)
		}
		c.Arguments = json.RawMessage(args)
	}
	return c, nil
}
