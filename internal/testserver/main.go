// Command testserver is a small MCP server (mcp-go, stdio or streamable
// HTTP) that toolwarden's proxy tests run as an upstream. Its tools misbehave
// on request: print garbage, crash mid-call, hang, change their own
// definition mid-session.
//
//	testserver [-http ADDR] [-garbage-at-start] [-state DIR] [-count-echo]
//	testserver -http ADDR -reverse-proxy URL
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

var (
	httpAddr       = flag.String("http", "", "serve streamable HTTP on this address instead of stdio")
	garbageAtStart = flag.Bool("garbage-at-start", false, "write non-JSON lines to stdout before serving")
	stateDir       = flag.String("state", os.TempDir(), "folder for state that must survive a restart (flaky)")
	relay          = flag.Bool("relay", false, "instead of serving, run the command given after the flags and copy bytes both ways (the floor for any stdio proxy)")
	reverseProxy   = flag.String("reverse-proxy", "", "instead of serving MCP, forward every HTTP request on -http to this URL with net/http/httputil (the floor for any HTTP proxy)")
	countEcho      = flag.Bool("count-echo", false, "echo appends \" (seen N)\": how many times this server has echoed that message (benchmarks check each call ran once)")
)

var mutableVersion atomic.Int64

func main() {
	flag.Parse()
	if *relay {
		runRelay(flag.Args())
		return
	}
	if *reverseProxy != "" {
		log.Fatal(runReverseProxy(*httpAddr, *reverseProxy))
	}
	s := server.NewMCPServer("testserver", "1.0.0", server.WithToolCapabilities(true), server.WithLogging(), server.WithElicitation(), server.WithRoots(), server.WithInstructions("testserver: tools that misbehave on request"))

	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Echoes its message."),
		mcp.WithString("message", mcp.Required(), mcp.Description("what to echo")),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
	), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		msg := r.GetString("message", "")
		if *countEcho {
			return mcp.NewToolResultText(fmt.Sprintf("echo: %s (seen %d)", msg, echoed.seen(msg))), nil
		}
		return mcp.NewToolResultText("echo: " + msg), nil
	})

	s.AddTool(mcp.NewTool("write",
		mcp.WithDescription("Pretends to overwrite something."),
		mcp.WithString("what"),
		mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("wrote " + r.GetString("what", "")), nil
	})

	s.AddTool(mcp.NewTool("garbage",
		mcp.WithDescription("Writes non-JSON lines to stdout, then answers."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stdout, "this is not JSON")
		fmt.Fprintln(os.Stdout, `{"jsonrpc":"2.0","id":"nobody-asked","result":{}}`)
		fmt.Fprintln(os.Stdout, `{"truncated":`)
		return mcp.NewToolResultText("answered after garbage"), nil
	})

	s.AddTool(mcp.NewTool("crash",
		mcp.WithDescription("Exits the server mid-call."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})

	s.AddTool(mcp.NewTool("flaky",
		mcp.WithDescription("Crashes the server the first time it is called, then works. Idempotent."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false),
	), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return flaky("flaky"), nil
	})

	s.AddTool(mcp.NewTool("flaky_write",
		mcp.WithDescription("Crashes the server the first time it is called, then works. Not idempotent."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithIdempotentHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return flaky("flaky_write"), nil
	})

	s.AddTool(mcp.NewTool("slow",
		mcp.WithDescription("Sleeps for ms milliseconds."),
		mcp.WithNumber("ms"),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-time.After(time.Duration(r.GetFloat("ms", 0)) * time.Millisecond):
			return mcp.NewToolResultText("slept"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})

	// Requests to the client and log messages (see internal/proxy/downstream.go).
	ro := []mcp.ToolOption{mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false)}
	s.AddTool(mcp.NewTool("sample", append([]mcp.ToolOption{mcp.WithDescription("Asks the client's model to complete its prompt (sampling/createMessage) and returns the answer."),
		mcp.WithString("prompt", mcp.Required())}, ro...)...),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			//lint:ignore SA1019 servers on older protocol versions still sample; the proxy relays it
			res, err := s.RequestSampling(ctx, mcp.CreateMessageRequest{CreateMessageParams: mcp.CreateMessageParams{
				Messages:     []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent(r.GetString("prompt", ""))}},
				SystemPrompt: "testserver asks",
				MaxTokens:    42,
			}})
			if err != nil {
				return mcp.NewToolResultError("sampling failed: " + err.Error()), nil
			}
			text := ""
			if tc, ok := res.Content.(mcp.TextContent); ok {
				text = tc.Text
			}
			return mcp.NewToolResultText(fmt.Sprintf("model %s said: %s", res.Model, text)), nil
		})
	s.AddTool(mcp.NewTool("roots", append([]mcp.ToolOption{mcp.WithDescription("Lists the client's roots (roots/list).")}, ro...)...),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := s.RequestRoots(ctx, mcp.ListRootsRequest{})
			if err != nil {
				return mcp.NewToolResultError("roots/list failed: " + err.Error()), nil
			}
			var uris []string
			for _, root := range res.Roots {
				uris = append(uris, root.URI)
			}
			return mcp.NewToolResultText("roots: " + strings.Join(uris, " ")), nil
		})
	s.AddTool(mcp.NewTool("roots_many", append([]mcp.ToolOption{mcp.WithDescription("Asks for the client's roots n times at once, waits up to a second, and reports the requests refused."),
		mcp.WithNumber("n")}, ro...)...),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := int(r.GetFloat("n", 1))
			ctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			errs := make(chan error, n)
			for range n {
				go func() {
					_, err := s.RequestRoots(ctx, mcp.ListRootsRequest{})
					errs <- err
				}()
			}
			refused, first := 0, ""
			for range n {
				if err := <-errs; err != nil && strings.Contains(err.Error(), "in flight") {
					if refused++; first == "" {
						first = err.Error()
					}
				}
			}
			return mcp.NewToolResultText(fmt.Sprintf("refused %d: %s", refused, first)), nil
		})
	s.AddTool(mcp.NewTool("ask", append([]mcp.ToolOption{mcp.WithDescription("Asks the user a question (elicitation/create) and returns the answer."),
		mcp.WithString("question", mcp.Required())}, ro...)...),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
				Message: r.GetString("question", ""),
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
					"answer": map[string]any{"type": "string"}}},
			}})
			if err != nil {
				return mcp.NewToolResultError("elicitation failed: " + err.Error()), nil
			}
			b, _ := json.Marshal(res.Content)
			return mcp.NewToolResultText(fmt.Sprintf("%s %s", res.Action, b)), nil
		})
	s.AddTool(mcp.NewTool("log", append([]mcp.ToolOption{mcp.WithDescription("Logs one message at every level, whatever level the client set.")}, ro...)...),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for _, l := range []mcp.LoggingLevel{mcp.LoggingLevelDebug, mcp.LoggingLevelInfo, mcp.LoggingLevelNotice, mcp.LoggingLevelWarning,
				mcp.LoggingLevelError, mcp.LoggingLevelCritical, mcp.LoggingLevelAlert, mcp.LoggingLevelEmergency} {
				_ = s.SendNotificationToClient(ctx, string(mcp.MethodNotificationMessage), map[string]any{"level": l, "logger": "ts", "data": "at " + string(l)})
			}
			return mcp.NewToolResultText("logged"), nil
		})

	s.AddTool(mcp.NewTool("progress",
		mcp.WithDescription("Reports steps progress notifications for the call's progressToken, and one for a token the call did not give, then answers."),
		mcp.WithNumber("steps"),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv := server.ServerFromContext(ctx)
		steps := int(r.GetFloat("steps", 3))
		var token any
		if r.Params.Meta != nil {
			token = r.Params.Meta.ProgressToken
		}
		// mcp-go queues notifications and writes the answer directly: the
		// pauses let each notification out before the answer, as during
		// real work.
		_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{"progressToken": "not-yours", "progress": 1})
		for i := 1; token != nil && i <= steps; i++ {
			time.Sleep(20 * time.Millisecond)
			_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{"progressToken": token, "progress": i, "total": steps})
		}
		time.Sleep(20 * time.Millisecond)
		return mcp.NewToolResultText(fmt.Sprintf("%d steps", steps)), nil
	})
	s.AddTool(mcp.NewTool("big",
		mcp.WithDescription("Returns n bytes of text."),
		mcp.WithNumber("n"),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strings.Repeat("x", int(r.GetFloat("n", 0)))), nil
	})

	s.AddTool(mcp.NewTool("env",
		mcp.WithDescription("Reports an environment variable and the working directory."),
		mcp.WithString("name", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		wd, _ := os.Getwd()
		v, ok := os.LookupEnv(r.GetString("name", ""))
		return mcp.NewToolResultText(fmt.Sprintf("set=%t value=%s cwd=%s", ok, v, wd)), nil
	})

	s.AddTool(mcp.NewTool("headers",
		mcp.WithDescription("Reports the Authorization and X-Test headers of the HTTP request (streamable HTTP only)."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(fmt.Sprintf("authorization=%s x-test=%s", r.Header.Get("Authorization"), r.Header.Get("X-Test"))), nil
	})

	s.AddTool(mutableTool(0), mutableHandler)
	s.AddTool(metaTool())
	s.AddTool(mcp.NewTool("flip",
		mcp.WithDescription("Changes the annotations of tool mutable and announces tools/list_changed."),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false),
	), func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		v := mutableVersion.Add(1)
		s.AddTool(mutableTool(v), mutableHandler)
		return mcp.NewToolResultText(fmt.Sprintf("mutable is now version %d", v)), nil
	})

	if *garbageAtStart {
		fmt.Fprintln(os.Stdout, "starting up... (not JSON)")
		fmt.Fprintln(os.Stdout, "[1,2,3]")
	}
	if *httpAddr != "" {
		h := server.NewStreamableHTTPServer(s)
		log.Fatal(h.Start(*httpAddr))
	}
	if err := server.ServeStdio(s); err != nil {
		log.Fatal(err)
	}
}

// mutableTool is version v of tool "mutable": an open-world tool (asked
// under approval mode auto) whose annotations change with every flip.
func mutableTool(v int64) mcp.Tool {
	return mcp.NewTool("mutable",
		mcp.WithDescription("A tool whose definition changes when flip is called."),
		mcp.WithString("x"),
		mcp.WithToolAnnotation(mcp.ToolAnnotation{
			Title:           fmt.Sprintf("Mutable v%d", v),
			ReadOnlyHint:    mcp.ToBoolPtr(false),
			DestructiveHint: mcp.ToBoolPtr(false),
			IdempotentHint:  mcp.ToBoolPtr(v%2 == 1),
			OpenWorldHint:   mcp.ToBoolPtr(true),
		}),
	)
}

func mutableHandler(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText(fmt.Sprintf("mutable v%d ran", mutableVersion.Load())), nil
}

// runRelay is the least a stdio proxy can do: start the upstream and copy
// bytes both ways, with no parsing at all. Benchmarks compare toolwarden
// wrap against it.
func runRelay(argv []string) {
	if len(argv) == 0 {
		log.Fatal("testserver -relay: no command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	go func() {
		_, _ = io.Copy(in, os.Stdin)
		in.Close()
	}()
	_, _ = io.Copy(os.Stdout, out)
	_ = cmd.Wait()
}

// runReverseProxy is the least an HTTP proxy can do: forward each request
// to target and stream the answer back, parsing no MCP. Its transport keeps
// as many idle connections to target as the load needs (Go's default keeps
// 2, which would make it open a connection per call under load and measure
// that instead of proxying).
func runReverseProxy(addr, target string) error {
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return fmt.Errorf("testserver -reverse-proxy %q: not an absolute URL (%v)", target, err)
	}
	if addr == "" {
		return fmt.Errorf("testserver -reverse-proxy: give the address to listen on with -http")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 0, 4096
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.URL.Path = r.In.URL.Path },
		Transport:     tr,
		FlushInterval: -1,
	}
	return http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The request is read whole before it is forwarded: Go's transport
		// can still be reading a request body when the answer is back and
		// the handler has returned, fail on the closed body, and then close
		// the upstream connection under the next request that reuses it,
		// cutting that answer short. MCP requests are small; no byte of
		// them is parsed.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "testserver -reverse-proxy: reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r)
	}))
}

// echoed counts the messages echo has answered, for -count-echo.
var echoed = &echoCounts{n: map[string]int{}}

type echoCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (e *echoCounts) seen(msg string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n[msg]++
	return e.n[msg]
}

func flaky(name string) *mcp.CallToolResult {
	marker := filepath.Join(*stateDir, name+".crashed")
	if _, err := os.Stat(marker); err != nil {
		_ = os.WriteFile(marker, nil, 0o600)
		os.Exit(4)
	}
	return mcp.NewToolResultText(name + " ok")
}
