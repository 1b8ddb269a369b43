package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The official TypeScript SDK's streamable HTTP client, pointed at
// `toolwarden serve` by URL with a bearer token, in front of the real
// server-filesystem (stdio) and server-everything (streamable HTTP): the
// tools are listed as <server>__<tool>, an allowed call returns the real
// result, a denied one is a tool error naming the rule, an ask is answered
// by the client's own elicitation handler on the call's session, and runs
// only when accepted. The same client with no token, or a token serve does
// not know, gets 401 and never reaches a tool.
func TestServeWorksWithTheTypeScriptSDKClient(t *testing.T) {
	t.Parallel()
	w := newServeWorld(t)
	res := runServeTS(t, w.front.url, w.bearer, true, []string{"allow_once", "decline"},
		tsStep{Op: "list"},
		tsStep{Op: "call", Name: "fs__read_text_file", Arguments: map[string]any{"path": w.path("token.txt")}},
		tsStep{Op: "call", Name: "fs__read_text_file", Arguments: map[string]any{"path": w.path("secret/key.txt")}},
		tsStep{Op: "call", Name: "every__echo", Arguments: map[string]any{"message": "through serve"}},
		tsStep{Op: "call", Name: "fs__write_file", Arguments: map[string]any{"path": w.path("approved.txt"), "content": "approved by the client"}},
		tsStep{Op: "call", Name: "fs__write_file", Arguments: map[string]any{"path": w.path("declined.txt"), "content": "declined by the client"}},
		tsStep{Op: "call", Name: "fs__move_file", Arguments: map[string]any{"source": w.path("token.txt"), "destination": w.path("moved.txt")}},
	)
	if !res.Connected || len(res.Results) != 7 {
		t.Fatalf("the client did not run its script: %+v", res)
	}
	for _, r := range res.Results[:6] {
		if r.Thrown != "" {
			t.Fatalf("%s %s threw instead of answering: %s", r.Op, r.Name, r.Thrown)
		}
	}
	list, read, denied, echo, approved, declined, hidden := res.Results[0], res.Results[1], res.Results[2], res.Results[3], res.Results[4], res.Results[5], res.Results[6]

	t.Run("the session is a 2025-11-25 one with an id serve minted", func(t *testing.T) {
		if res.ProtocolVersion != "2025-11-25" || res.SessionID == "" {
			t.Errorf("protocol %q, session id %q", res.ProtocolVersion, res.SessionID)
		}
	})
	t.Run("both upstreams' tools are listed as server__tool and nothing else", func(t *testing.T) {
		for _, want := range []string{"fs__read_text_file", "fs__write_file", "every__echo", "every__get-sum"} {
			if !slices.Contains(list.Tools, want) {
				t.Errorf("%s is not listed: %v", want, list.Tools)
			}
		}
		for _, name := range list.Tools {
			if !strings.HasPrefix(name, "fs__") && !strings.HasPrefix(name, "every__") {
				t.Errorf("%q is not named <server>__<tool>", name)
			}
		}
	})
	t.Run("a tool the config hides is neither listed nor run when called by name", func(t *testing.T) {
		if slices.Contains(list.Tools, "fs__move_file") {
			t.Errorf("the hidden fs__move_file is listed: %v", list.Tools)
		}
		if hidden.Thrown == "" && !hidden.IsError {
			t.Errorf("the call of the hidden tool succeeded: %s", hidden.Text)
		}
		mustNotExistFile(t, w.path("moved.txt"), "the hidden move_file ran")
	})
	t.Run("an allowed read returns the file's real content", func(t *testing.T) {
		if read.IsError || !strings.Contains(read.Text, w.secret) {
			t.Errorf("the read (is_error %v) lacks the file's content %q: %s", read.IsError, w.secret, read.Text)
		}
	})
	t.Run("a denied read is a tool error naming the rule and shows nothing of the file", func(t *testing.T) {
		if !denied.IsError || !strings.Contains(denied.Text, serveDenyReason) || !strings.Contains(denied.Text, "argguard") {
			t.Errorf("the denied read (is_error %v) does not name argguard and its reason %q: %s", denied.IsError, serveDenyReason, denied.Text)
		}
		if strings.Contains(denied.Text, "never to be read") {
			t.Errorf("the denied read returned the file: %s", denied.Text)
		}
	})
	t.Run("a call to the HTTP upstream returns its real answer", func(t *testing.T) {
		if echo.IsError || echo.Text != "Echo: through serve" {
			t.Errorf("every__echo (is_error %v): %q", echo.IsError, echo.Text)
		}
	})
	t.Run("an ask the client's elicitation handler accepts runs the call", func(t *testing.T) {
		b, err := os.ReadFile(w.path("approved.txt"))
		if approved.IsError || err != nil || string(b) != "approved by the client" {
			t.Errorf("the approved write (is_error %v: %s) left %q (%v)", approved.IsError, approved.Text, b, err)
		}
	})
	t.Run("an ask the client declines does not run the call", func(t *testing.T) {
		if !declined.IsError {
			t.Errorf("the declined write is not a tool error: %s", declined.Text)
		}
		mustNotExistFile(t, w.path("declined.txt"), "the declined write ran")
	})
	t.Run("the client was asked once per asked call, and about that call", func(t *testing.T) {
		if len(res.Asked) != 2 {
			t.Fatalf("the client was asked %d times, want 2: %+v", len(res.Asked), res.Asked)
		}
		for _, a := range res.Asked {
			mustContain(t, a.Message, "write_file")
		}
	})
	t.Run("serve's audit log holds one check per call with its verdict, in the token's principal's session", func(t *testing.T) {
		want := []string{"read_text_file allow", "read_text_file deny", "echo allow", "write_file ask", "write_file ask", "move_file deny"}
		if got := serveAuditRecords(t, w.front, "check"); !slices.Equal(got, want) {
			t.Errorf("checks %v, want %v (one per call, in order)", got, want)
		}
		for _, r := range serveAuditLog(t, w.front) {
			if r.Event == "check" && r.Session != "alice/s/"+res.SessionID {
				t.Errorf("a check of %s is in session %q, want alice's session %q", r.Decision.Tool, r.Session, "alice/s/"+res.SessionID)
			}
		}
	})

	before := serveAuditRecords(t, w.front, "check")
	t.Run("the client with no token is refused with 401 and calls nothing", func(t *testing.T) {
		res := runServeTS(t, w.front.url, "", true, nil, tsStep{Op: "call", Name: "fs__read_text_file", Arguments: map[string]any{"path": w.path("token.txt")}})
		mustBeRefused(t, "the client without a token", res)
	})
	t.Run("the client with a token serve does not know is refused with 401 and calls nothing", func(t *testing.T) {
		res := runServeTS(t, w.front.url, w.bearer+"x", true, nil, tsStep{Op: "call", Name: "fs__read_text_file", Arguments: map[string]any{"path": w.path("token.txt")}})
		mustBeRefused(t, "the client with an unknown token", res)
	})
	t.Run("a 401 challenges with Bearer and the protected-resource metadata, which names serve", func(t *testing.T) {
		mustChallenge(t, w.front.url)
	})
	t.Run("no refused client's call reached policy or an upstream", func(t *testing.T) {
		if got := serveAuditRecords(t, w.front, "check"); !slices.Equal(got, before) {
			t.Errorf("checks after the refused clients: %v, want still %v", got, before)
		}
	})
	t.Run("an approval for the session holds in that session only", func(t *testing.T) {
		write := func(name string) tsStep {
			return tsStep{Op: "call", Name: "fs__write_file", Arguments: map[string]any{"path": w.path(name), "content": name}}
		}
		first := runServeTS(t, w.front.url, w.bearer, true, []string{"allow_session"}, write("session-1.txt"), write("session-2.txt"))
		if len(first.Asked) != 1 || len(first.Results) != 2 || first.Results[0].IsError || first.Results[1].IsError {
			t.Fatalf("in the session that chose allow_session, want one prompt and both writes run: %+v", first)
		}
		// Same principal, new session: the approval does not follow it.
		second := runServeTS(t, w.front.url, w.bearer, true, []string{"decline"}, write("other-session.txt"))
		if len(second.Asked) != 1 || len(second.Results) != 1 || !second.Results[0].IsError {
			t.Errorf("a new session of the same principal was not asked again, or its declined write ran: %+v", second)
		}
		mustNotExistFile(t, w.path("other-session.txt"), "a session approval reached another session")
	})
}

// mustBeRefused fails unless the TypeScript client could not connect
// because serve answered 401 (the SDK's error carries the HTTP status as
// its code).
func mustBeRefused(t *testing.T, who string, res serveTSResult) {
	t.Helper()
	if res.Connected || res.Error == nil || fmt.Sprint(res.Error.Code) != "401" {
		t.Errorf("%s was not refused with 401: connected %v, error %+v, results %+v", who, res.Connected, res.Error, res.Results)
	}
}

// mustChallenge fails unless an MCP request to url with no token gets 401
// with a WWW-Authenticate: Bearer challenge whose resource_metadata URL
// serves RFC 9728 metadata naming url as the resource: what a client
// follows to learn where to get a token.
func mustChallenge(t *testing.T, url string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"no-token","version":"0"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	challenge := resp.Header.Get("WWW-Authenticate")
	m := regexp.MustCompile(`resource_metadata="([^"]+)"`).FindStringSubmatch(challenge)
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(challenge, "Bearer ") || m == nil {
		t.Fatalf("no token: status %d, WWW-Authenticate %q; want 401 and a Bearer challenge with resource_metadata", resp.StatusCode, challenge)
	}
	resp, err = http.Get(m[1])
	if err != nil {
		t.Fatalf("the challenge's resource_metadata %s cannot be fetched: %v", m[1], err)
	}
	defer resp.Body.Close()
	var meta struct {
		Resource string `json:"resource"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&meta); err != nil || resp.StatusCode != http.StatusOK || meta.Resource != url {
		t.Errorf("the metadata at %s (status %d, %v) names resource %q, want serve's URL %q", m[1], resp.StatusCode, err, meta.Resource, url)
	}
}

// The MCP Inspector's CLI, pointed at serve by URL with its --header for
// the bearer token, in both protocol eras it speaks (--protocol-era
// legacy: 2025-11-25 with a session; modern: 2026-07-28, stateless),
// lists the upstreams' tools as <server>__<tool> and calls them; it
// declares no elicitation, so an asked call is refused with a text that
// says how to approve it, and does not run. Without the header it lists
// nothing.
func TestServeWorksWithTheInspectorCLI(t *testing.T) {
	t.Parallel()
	w := newServeWorld(t)
	for _, era := range []struct {
		name, flag string
		session    string // the audit session's tag: "s" for an Mcp-Session-Id, "c" for a 2026-07-28 conversation
	}{
		{"2025-11-25 with a session", "legacy", "alice/s/"},
		{"2026-07-28 stateless", "modern", "alice/c/"},
	} {
		t.Run(era.name, func(t *testing.T) {
			inspect := func(args ...string) (string, bool) {
				return runInspector(t, w.front.url, w.bearer, append([]string{"--protocol-era", era.flag}, args...)...)
			}
			out, ok := inspect("--method", "tools/list")
			var list struct{ Tools []struct{ Name string } }
			if err := json.Unmarshal([]byte(out), &list); !ok || err != nil {
				t.Fatalf("tools/list (exit 0: %v, %v):\n%s", ok, err, out)
			}
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
			}
			for _, want := range []string{"fs__read_text_file", "every__echo"} {
				if !slices.Contains(names, want) {
					t.Errorf("%s is not listed to the Inspector: %v", want, names)
				}
			}

			checks := len(serveAuditRecords(t, w.front, "check"))
			out, ok = inspect("--method", "tools/call", "--tool-name", "fs__read_text_file", "--tool-arg", "path="+w.path("token.txt"))
			if !ok || !strings.Contains(out, w.secret) {
				t.Errorf("the allowed read through the Inspector (exit 0: %v) lacks %q:\n%s", ok, w.secret, out)
			}
			// The era the Inspector spoke is the one asked for: serve
			// keys a 2026-07-28 caller's state by conversation, not session.
			if log := serveAuditLog(t, w.front); len(log) == 0 || !strings.HasPrefix(log[len(log)-1].Session, era.session) {
				t.Errorf("the read was not decided in a %q session: %+v", era.session, log)
			}

			file := w.path("inspector-" + era.flag + ".txt")
			out, _ = inspect("--method", "tools/call", "--tool-name", "fs__write_file", "--tool-arg", "path="+file, "content=unasked")
			mustNotExistFile(t, file, "an asked write ran for a client that cannot answer asks")
			for _, want := range []string{`"isError": true`, "fs__write_file", "cannot show approval prompts", "The call was not made", "To allow it"} {
				mustContain(t, out, want)
			}
			if got := serveAuditRecords(t, w.front, "check")[checks:]; !slices.Equal(got, []string{"read_text_file allow", "write_file ask"}) {
				t.Errorf("the Inspector's calls were decided %v, want an allowed read and an asked write", got)
			}
		})
	}

	// Without the header the Inspector gets no tool at all.
	out, ok := runInspector(t, w.front.url, "", "--method", "tools/list")
	if ok || strings.Contains(out, "fs__read_text_file") {
		t.Errorf("the Inspector without a token listed tools (exit 0: %v):\n%s", ok, out)
	}
}

// mustNotExistFile fails when the file a refused call would have made
// exists.
func mustNotExistFile(t *testing.T, path, why string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s exists: %s", path, why)
	}
}
