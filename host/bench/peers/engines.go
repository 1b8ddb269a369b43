package peers

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/cedar-policy/cedar-go"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Call is the tool call every engine decides, as raw JSON bytes: a write
// by a filesystem server's write_file (destructive, so every engine asks).
// DeniedCall writes under /etc, which every engine denies.
var (
	Call       = []byte(`{"server":"fs","tool":"write_file","annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":false},"arguments":{"path":"/home/me/src/notes.txt","content":"hello"}}`)
	DeniedCall = []byte(`{"server":"fs","tool":"write_file","annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":false},"arguments":{"path":"/etc/passwd","content":"x"}}`)
	SafeCall   = []byte(`{"server":"fs","tool":"read_file","annotations":{"readOnlyHint":true,"destructiveHint":false,"openWorldHint":false},"arguments":{"path":"/home/me/src/notes.txt"}}`)
)

//go:embed rules/peers.rego
var regoSrc string

//go:embed rules/peers.cedar
var cedarSrc []byte

// OPA is the rule compiled once (rego.PrepareForEval), as a server would.
type OPA struct{ q rego.PreparedEvalQuery }

// NewOPA compiles rules/peers.rego.
func NewOPA(ctx context.Context) (*OPA, error) {
	q, err := rego.New(rego.Query("data.toolwarden.peers.decision"), rego.Module("peers.rego", regoSrc)).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("compiling rules/peers.rego: %w", err)
	}
	return &OPA{q: q}, nil
}

// Decide decodes the call with encoding/json and evaluates the rule: what
// OPA costs from bytes.
func (o *OPA) Decide(ctx context.Context, call []byte) (string, error) {
	var in any
	if err := json.Unmarshal(call, &in); err != nil {
		return "deny", nil
	}
	rs, err := o.q.Eval(ctx, rego.EvalInput(in))
	if err != nil {
		return "", err
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return "", fmt.Errorf("opa: unexpected result set %v", rs)
	}
	m, _ := rs[0].Expressions[0].Value.(map[string]any)
	d, _ := m["decision"].(string)
	if d == "" {
		return "", fmt.Errorf("opa: no decision in %v", rs[0].Expressions[0].Value)
	}
	return d, nil
}

// Cedar is the policy set parsed once.
type Cedar struct{ ps *cedar.PolicySet }

// NewCedar parses rules/peers.cedar.
func NewCedar() (*Cedar, error) {
	ps, err := cedar.NewPolicySetFromBytes("peers.cedar", cedarSrc)
	if err != nil {
		return nil, fmt.Errorf("parsing rules/peers.cedar: %w", err)
	}
	return &Cedar{ps: ps}, nil
}

var (
	cedarPrincipal = cedar.NewEntityUID("Agent", "agent")
	cedarAction    = cedar.NewEntityUID("Action", "call_tool")
)

// cedarCall is what the rule reads of a call. Cedar values have no floats
// and no null, so real tool arguments cannot be decoded into a cedar.Record
// directly: the robust path decodes a struct and builds the record.
type cedarCall struct {
	Server      string `json:"server"`
	Tool        string `json:"tool"`
	Annotations struct {
		DestructiveHint *bool `json:"destructiveHint"`
	} `json:"annotations"`
	Arguments struct {
		Path *string `json:"path"`
	} `json:"arguments"`
}

// Decide decodes the call, builds the request and authorizes it: what
// cedar-go costs from bytes. Forbid is deny, permit is allow, and Cedar's
// implicit deny (no policy fired) is ask.
func (c *Cedar) Decide(call []byte) (string, error) {
	var in cedarCall
	if err := json.Unmarshal(call, &in); err != nil {
		return "deny", nil
	}
	ctx := cedar.RecordMap{"server": cedar.String(in.Server)}
	if p := in.Annotations.DestructiveHint; p != nil {
		ctx["destructiveHint"] = cedar.Boolean(*p)
	}
	if p := in.Arguments.Path; p != nil {
		ctx["path"] = cedar.String(*p)
	}
	req := cedar.Request{
		Principal: cedarPrincipal,
		Action:    cedarAction,
		Resource:  cedar.NewEntityUID("Tool", cedar.String(in.Tool)),
		Context:   cedar.NewRecord(ctx),
	}
	d, diag := cedar.Authorize(c.ps, nil, req)
	switch {
	case d == cedar.Allow:
		return "allow", nil
	case len(diag.Reasons) > 0:
		return "deny", nil
	default:
		return "ask", nil
	}
}
