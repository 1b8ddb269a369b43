package sdk_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/sdk"
)

// formRecorder answers allow_once and keeps the decision field it was sent.
type formRecorder struct {
	mu    sync.Mutex
	field string
}

func (e *formRecorder) Elicit(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	b, _ := json.Marshal(r.Params.RequestedSchema)
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(b, &s)
	e.mu.Lock()
	e.field = string(s.Properties[channel.Field])
	e.mu.Unlock()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{channel.Field: "allow_once"},
	}}, nil
}

// A guarded server asks each client in the enum shape of the protocol it
// negotiated: enum with enumNames for 2025-06-18, a titled oneOf from
// 2025-11-25 (never both in one field, which the TypeScript SDK cut down
// to enum alone).
func TestAServerAsksEachClientInItsProtocolsEnumShape(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version   string
		want, not []string
	}{
		{mcp.ProtocolVersion20250618, []string{`"enum":["allow_once"`, `"enumNames":["Allow once"`}, []string{`"oneOf"`}},
		{"2025-11-25", []string{`"oneOf":[{"const":"allow_once","title":"Allow once"}`}, []string{`"enum"`, `"enumNames"`}},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			g := sdk.New(testhost.New(t, "", host.Defaults()))
			f := newFiles(g.ServerOption("fs"))
			rec := &formRecorder{}
			c := connectAs(t, f, tc.version, client.WithElicitationHandler(rec))
			if out, isErr := call(t, c, "write_file", writeArgs); isErr || out != "written" {
				t.Fatalf("allowed call: %v %q", isErr, out)
			}
			rec.mu.Lock()
			field := rec.field
			rec.mu.Unlock()
			for _, w := range tc.want {
				if !strings.Contains(field, w) {
					t.Errorf("the form's field lacks %s: %s", w, field)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(field, n) {
					t.Errorf("the form's field has %s: %s", n, field)
				}
			}
		})
	}
}
