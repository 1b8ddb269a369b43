package serve

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/internal/toolresult"
)

// A serve with a shared store reads "always" approvals from the store
// alone: a refusal's advice names the store and the caller's own scope
// (principal:carol), never an approvals file. The grant the advice
// describes is the one that lets carol's next call through.
func TestAServeRefusalWithAStoreAdvisesAGrantForTheCallerInThatStore(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ran := 0
	up := server.NewMCPServer("up", "1", server.WithToolCapabilities(true))
	up.AddTool(mcp.NewTool("touch"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ran++
		return mcp.NewToolResultText("touched"), nil
	})
	upTS := httptest.NewServer(server.NewStreamableHTTPServer(up))
	t.Cleanup(upTS.Close)

	url := "sqlite:" + filepath.Join(t.TempDir(), "store.db")
	st, err := store.Open(ctx, url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tokens, err := identity.LoadTokens(identitytest.WriteTokens(t, t.TempDir(), map[string]identity.Principal{
		"carol-token": {Name: "carol", Groups: []string{"dev"}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	h := testhost.New(t, "", host.Defaults().WithStore(st))
	s := New(h, []serverspec.Spec{{Name: "up", URL: upTS.URL + "/mcp"}}, Options{Auth: tokens, Store: st})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	front := httptest.NewServer(s.Handler())
	t.Cleanup(front.Close)

	// A client that declares no elicitation: serve cannot ask it.
	c, err := client.NewStreamableHttpClient(front.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer carol-token"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.LATEST_PROTOCOL_VERSION, ClientInfo: mcp.Implementation{Name: "t", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	touch := func() (string, bool) {
		res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "up__touch", Arguments: map[string]any{}}})
		if err != nil {
			t.Fatal(err)
		}
		return toolresult.Text(res), res.IsError
	}

	out, isErr := touch()
	want := "toolwarden approvals add --store " + url + " --scope principal:carol --server up --tool touch --hash "
	if !isErr || !strings.Contains(out, want) || strings.Contains(out, "--approvals") || ran != 0 {
		t.Fatalf("the refusal (error %v, ran %d):\n%s\nwant it to advise %q and name no approvals file", isErr, ran, out, want)
	}
	hash := strings.Fields(out[strings.Index(out, want)+len(want):])[0]
	hash = strings.TrimRight(hash, ";.")

	// What `approvals add` with those flags stores.
	if _, err := st.AddGrant(ctx, session.SharedGrant{Key: session.ApprovalKey{App: "up", Server: "up", Tool: "touch", Hash: hash},
		Scope: session.GrantScope{Kind: session.ScopePrincipal, Name: "carol"}, GrantedBy: "test"}); err != nil {
		t.Fatal(err)
	}
	if out, isErr := touch(); isErr || ran != 1 {
		t.Fatalf("carol's call after the advised grant: %q (error %v, ran %d)", out, isErr, ran)
	}
}
