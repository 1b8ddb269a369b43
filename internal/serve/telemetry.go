package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/telemetry"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// traced is the SERVER span of the request being served, and what the
// call's handler learnt of how it ended (it is in the request's context).
type traced struct {
	span    *telemetry.Span
	mu      sync.Mutex
	errType string
}

type tracedKey struct{}

func tracedFrom(ctx context.Context) *traced {
	t, _ := ctx.Value(tracedKey{}).(*traced)
	return t
}

// fail records why the request ended badly ("tool_error", "denied").
func (t *traced) fail(errType string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.errType = errType
	t.mu.Unlock()
}

// rpcHead is what a span needs of a JSON-RPC request body.
type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string          `json:"name"`
		URI  string          `json:"uri"`
		Meta json.RawMessage `json:"_meta"`
	} `json:"params"`
}

// traceRequest serves one POST inside a SERVER span named and attributed
// per the GenAI MCP conventions, its parent the traceparent in _meta.
// Without telemetry, or for what is not a request (a notification, a
// client's answer, a GET stream), it just serves.
func (s *Server) traceRequest(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if !s.opts.Telemetry.Enabled() || r.Method != http.MethodPost || r.Body == nil {
		next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var head rpcHead
	if err != nil || json.Unmarshal(body, &head) != nil || head.Method == "" || len(head.ID) == 0 {
		next.ServeHTTP(w, r)
		return
	}
	version := r.Header.Get(mcp.HeaderProtocolVersion)
	target := head.Params.Name
	if target == "" {
		target = head.Params.URI
	}
	ctx, span := s.opts.Telemetry.StartServer(r.Context(), telemetry.Request{
		Method: head.Method, Target: target, ProtocolVersion: version,
		SessionID: r.Header.Get("Mcp-Session-Id"), RequestID: head.ID, Meta: head.Params.Meta,
	})
	if head.Params.URI != "" {
		span.SetResourceURI(head.Params.URI)
	}
	tr := &traced{span: span}
	rec := &statusRecorder{ResponseWriter: w}
	next.ServeHTTP(rec, r.WithContext(context.WithValue(ctx, tracedKey{}, tr)))
	tr.mu.Lock()
	errType := tr.errType
	tr.mu.Unlock()
	if errType == "" && rec.status >= 400 {
		errType = rec.rpcErrorType()
	}
	span.End(errType)
}

// statusRecorder keeps a response's status and the start of an error
// body (a JSON-RPC error's code names the error type).
type statusRecorder struct {
	http.ResponseWriter
	status int
	head   []byte
}

func (w *statusRecorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRecorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= 400 && len(w.head) < 4096 {
		w.head = append(w.head, b[:min(len(b), 4096-len(w.head))]...)
	}
	return w.ResponseWriter.Write(b)
}

// Flush keeps streaming (SSE) working through the recorder.
func (w *statusRecorder) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusRecorder) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// rpcErrorType is the JSON-RPC error code of an error answer, else the
// HTTP status ("http_404").
func (w *statusRecorder) rpcErrorType() string {
	var e struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(w.head, &e) == nil && e.Error != nil && e.Error.Code != 0 {
		return strconv.Itoa(e.Error.Code)
	}
	return "http_" + strconv.Itoa(w.status)
}

// decided records the decision on the request's span: the verdict, the
// reasons' codes and the digest of the policy in force. Argument values
// are never recorded.
func (s *Server) decided(ctx context.Context, d *host.Decision) {
	tr := tracedFrom(ctx)
	if tr == nil {
		return
	}
	codes := make([]string, 0, len(d.Reasons))
	for _, r := range d.Reasons {
		if r.Code != "" {
			codes = append(codes, r.Code)
		}
	}
	tr.span.Decision(d.Decision.String(), codes, s.policyDigest(s.h.Config()))
}

// policyDigest is a digest of the config a decision was made by, so that
// a trace says which policy decided; computed once per config (a reload
// brings a new one).
func (s *Server) policyDigest(cfg *config.Config) string {
	s.digestMu.Lock()
	defer s.digestMu.Unlock()
	if cfg == s.digestOf {
		return s.digest
	}
	s.digestOf, s.digest = cfg, ""
	if b, err := json.Marshal(cfg); err == nil {
		sum := sha256.Sum256(b)
		s.digest = "sha256:" + hex.EncodeToString(sum[:8])
	}
	return s.digest
}

// upstreamSpan starts the CLIENT span of a call to the upstream; the
// context it returns makes upstream.Client.Call carry that span's
// traceparent in the request's _meta, so the upstream's spans join the trace.
func (s *Server) upstreamSpan(ctx context.Context, rt *route) (context.Context, *telemetry.Span) {
	if !s.opts.Telemetry.Enabled() {
		return ctx, nil
	}
	ctx, span := s.opts.Telemetry.StartClient(ctx, rt.up.Name(), telemetry.Request{Method: "tools/call", Target: rt.tool.Name})
	return upstream.WithMeta(ctx, telemetry.MetaMembers(ctx)), span
}
