package serve

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// recordingApprover keeps the schema of the one prompt it is shown and
// declines it.
type recordingApprover struct {
	mu     sync.Mutex
	schema string
}

func (a *recordingApprover) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	b, _ := json.Marshal(req.Params.RequestedSchema)
	a.mu.Lock()
	a.schema = string(b)
	a.mu.Unlock()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
}

// A host that keeps "always" approvals in a shared store alone (no
// approvals file: a library user's serve) offers "always" in its prompt:
// the offer follows what the host can keep, not whether a file is set.
func TestAServeWhoseHostKeepsAlwaysInAStoreOffersAlways(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	up := server.NewMCPServer("up", "1", server.WithToolCapabilities(true))
	up.AddTool(mcp.NewTool("touch", mcp.WithDestructiveHintAnnotation(true)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("touched"), nil
	})
	upTS := httptest.NewServer(server.NewStreamableHTTPServer(up))
	t.Cleanup(upTS.Close)

	st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "store.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := testhost.New(t, "[apps._default]\ndestructive_enabled = true\n", host.Defaults().WithStore(st))
	if h.Approvals() != nil {
		t.Fatal("the host has an approvals file: this test needs one that keeps always in the store alone")
	}
	s := New(h, []serverspec.Spec{{Name: "up", URL: upTS.URL + "/mcp"}}, Options{Store: st})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	front := httptest.NewServer(s.Handler())
	t.Cleanup(front.Close)

	tr, err := transport.NewStreamableHTTP(front.URL+"/mcp", transport.WithHTTPTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	a := &recordingApprover{}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125), client.WithElicitationHandler(a))
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.ProtocolVersion20251125, ClientInfo: mcp.Implementation{Name: "t", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "up__touch", Arguments: map[string]any{}}}); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	schema := a.schema
	a.mu.Unlock()
	if schema == "" {
		t.Fatal("the call was not asked about: it should need approval (destructive)")
	}
	if !strings.Contains(schema, `"`+policy.OptionAlways+`"`) {
		t.Fatalf("the prompt does not offer %q though the host keeps it in its store:\n%s", policy.OptionAlways, schema)
	}
}
