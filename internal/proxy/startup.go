package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolwarden/toolwarden/internal/audit"
	"io"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/upstream"
)

// An upstream that cannot start must be visible to the agent, not look
// like a healthy server with no tools.
//
//   - With WithWaitForUpstreams (wrap: one server, nothing to serve
//     without it), Run answers the client's first request, its initialize,
//     with a JSON-RPC error that carries the cause, and returns a
//     *StartupError (wrap exits non-zero). Claude Code then shows the
//     server as failed with the message; Codex shows "MCP client for X
//     failed to start: <message>".
//   - Otherwise (proxy: many servers), the healthy servers are served;
//     the failed one keeps being retried with backoff, its tools are
//     missing from tools/list until it comes up, and a call to one of its
//     tools gets a tool error that names the cause (see unstarted). The
//     cause is logged and recorded in the audit log (event "upstream").

// StartupError is what Run returns when, waiting for its upstreams (see
// WithWaitForUpstreams), one could not start.
type StartupError struct {
	Server  string // its name
	Command string // its command line or URL
	Cause   error  // why (see upstream.NotFoundError, upstream.ExitedError)
}

func (e *StartupError) Error() string {
	return fmt.Sprintf("MCP server %q could not start: %v", e.Server, e.Cause)
}

func (e *StartupError) Unwrap() error { return e.Cause }

// startFailed reports an upstream's failed first start: on stderr (the
// log) and in the audit log.
func (p *Proxy) startFailed(u *upstream.Client, err error) {
	cause := startCause(err)
	p.log.Error("upstream did not start", "server", u.Name(), "cmd", u.Spec().Describe(), "err", cause)
	p.h.Audit(p.session, audit.UpstreamFailure{Server: u.Name(), Command: u.Spec().Describe(), Error: cause.Error()})
}

// startCause is why a start failed, without the "is unavailable" wrapper.
func startCause(err error) error {
	var ue *upstream.UnavailableError
	if errors.As(err, &ue) && ue.Cause != nil {
		return ue.Cause
	}
	return err
}

// startupFailure is the StartupError for the first upstream that is down
// once every upstream was tried, or nil.
func (p *Proxy) startupFailure() *StartupError {
	for _, u := range p.ups {
		if _, up := u.Capabilities(); up {
			continue
		}
		if err := u.Err(); err != nil {
			return &StartupError{Server: u.Name(), Command: u.Spec().Describe(), Cause: startCause(err)}
		}
	}
	return nil
}

// refuse serves a session that cannot be served: every request the
// client sends through mcp-go's side of the wire is answered with a
// JSON-RPC error carrying serr, and Run returns serr once one that is not
// server/discover (its initialize) was answered, or when the client's
// input ends. A client that probes with server/discover first (mcp-go's)
// falls back to initialize when the probe fails, and must read the cause
// there too.
func (p *Proxy) refuse(ctx context.Context, pr *io.PipeReader, listening chan<- struct{}, serr *StartupError) error {
	stop := context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })
	defer stop()
	defer pr.Close()
	close(listening)
	br := bufio.NewReader(pr)
	for {
		line, err := br.ReadBytes('\n')
		if id, method, ok := request(line); ok {
			_, _ = p.out.Write(startupErrorResponse(id, serr))
			if method != string(mcp.MethodServerDiscover) {
				return serr
			}
		}
		if err != nil {
			return serr
		}
	}
}

// request reads the id and method of a JSON-RPC request (not a
// notification, not an answer).
func request(line []byte) (id json.RawMessage, method string, ok bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method == "" || len(m.ID) == 0 || string(m.ID) == "null" {
		return nil, "", false
	}
	return m.ID, m.Method, true
}

// startupErrorResponse is the JSON-RPC error that tells the client why the
// server it started cannot serve; data repeats the parts for programs.
func startupErrorResponse(id json.RawMessage, serr *StartupError) []byte {
	body, _ := json.Marshal(map[string]any{
		"code":    mcp.INTERNAL_ERROR,
		"message": "toolwarden: " + serr.Error(),
		"data":    map[string]string{"server": serr.Server, "command": serr.Command, "cause": serr.Cause.Error()},
	})
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":%s}`+"\n", id, body)
}

// unstarted answers a call to a tool that has no route because its server
// never started: a tool error that says why, instead of "there is no
// tool". In proxy mode the server is the one whose prefix the name has;
// with a single upstream, it is that one.
func (p *Proxy) unstarted(name string) (outcome, bool) {
	if !p.opts.namespace && len(p.ups) != 1 {
		return outcome{}, false
	}
	for _, u := range p.ups {
		if p.opts.namespace && !strings.HasPrefix(name, u.Name()+Separator) {
			continue
		}
		if _, up := u.Capabilities(); up || len(u.Tools()) > 0 {
			continue
		}
		err := u.Err()
		if err == nil {
			continue
		}
		retry := "toolwarden keeps trying to start it"
		if d := u.RetryIn(); d > 0 {
			retry = fmt.Sprintf("toolwarden tries again in %s", d.Round(time.Second))
		}
		return made(toolError("toolwarden: %s was not called: MCP server %q could not start: %v. %s; if the cause is its command or configuration, fix that and restart.", name, u.Name(), startCause(err), retry)), true
	}
	return outcome{}, false
}
