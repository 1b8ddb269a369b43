package otlptest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
)

// Span is one span the collector received.
type Span struct {
	TraceID, SpanID, ParentSpanID string // lowercase hex, as OTLP JSON writes them
	Name                          string
	Kind                          int // 1 internal, 2 server, 3 client (OTLP's SpanKind)
	Attributes                    map[string]any
	StatusCode                    int // 0 unset, 1 ok, 2 error
	StatusMessage                 string
	Links                         []Link
	Events                        []Event
	Resource                      map[string]any
	Scope                         string
}

// Link is a span link.
type Link struct{ TraceID, SpanID string }

// Event is a span event.
type Event struct {
	Name       string
	Attributes map[string]any
}

// The OTLP span kinds a test asserts.
const (
	KindServer = 2
	KindClient = 3
)

// HistogramPoint is one data point of a histogram metric.
type HistogramPoint struct {
	Metric     string
	Unit       string
	Attributes map[string]any
	Count      uint64
	Sum        float64
	Bounds     []float64
	Resource   map[string]any
}

// Log is one log record the collector received.
type Log struct {
	Body           any
	EventName      string
	SeverityNumber int
	SeverityText   string
	TraceID        string
	SpanID         string
	Attributes     map[string]any
	Resource       map[string]any
}

// The OTLP JSON shapes (opentelemetry-proto's JSON mapping), as far as the
// readers need them.
type (
	keyValue struct {
		Key   string   `json:"key"`
		Value anyValue `json:"value"`
	}
	anyValue struct {
		String *string  `json:"stringValue"`
		Bool   *bool    `json:"boolValue"`
		Int    *jsonInt `json:"intValue"`
		Double *float64 `json:"doubleValue"`
		Array  *struct {
			Values []anyValue `json:"values"`
		} `json:"arrayValue"`
		KVList *struct {
			Values []keyValue `json:"values"`
		} `json:"kvlistValue"`
		Bytes *string `json:"bytesValue"`
	}
	resource struct {
		Attributes []keyValue `json:"attributes"`
	}
	scope struct {
		Name string `json:"name"`
	}
)

// jsonInt reads an int64 OTLP JSON writes as a string (or a number).
type jsonInt int64

func (n *jsonInt) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := strconv.ParseInt(s, 10, 64)
		*n = jsonInt(v)
		return err
	}
	var v int64
	err := json.Unmarshal(b, &v)
	*n = jsonInt(v)
	return err
}

func (v anyValue) value() any {
	switch {
	case v.String != nil:
		return *v.String
	case v.Bool != nil:
		return *v.Bool
	case v.Int != nil:
		return int64(*v.Int)
	case v.Double != nil:
		return *v.Double
	case v.Bytes != nil:
		return *v.Bytes
	case v.Array != nil:
		out := make([]any, len(v.Array.Values))
		for i, e := range v.Array.Values {
			out[i] = e.value()
		}
		return out
	case v.KVList != nil:
		return attributes(v.KVList.Values)
	}
	return nil
}

func attributes(kvs []keyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value.value()
	}
	return m
}

type tracesLine struct {
	ResourceSpans []struct {
		Resource   resource `json:"resource"`
		ScopeSpans []struct {
			Scope scope `json:"scope"`
			Spans []struct {
				TraceID      string     `json:"traceId"`
				SpanID       string     `json:"spanId"`
				ParentSpanID string     `json:"parentSpanId"`
				Name         string     `json:"name"`
				Kind         int        `json:"kind"`
				Attributes   []keyValue `json:"attributes"`
				Status       struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"status"`
				Links []struct {
					TraceID string `json:"traceId"`
					SpanID  string `json:"spanId"`
				} `json:"links"`
				Events []struct {
					Name       string     `json:"name"`
					Attributes []keyValue `json:"attributes"`
				} `json:"events"`
			} `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

// Spans returns every span received so far.
func (c *Collector) Spans() ([]Span, error) {
	lines, err := c.lines("traces")
	if err != nil {
		return nil, err
	}
	var out []Span
	for _, l := range lines {
		var tl tracesLine
		if err := json.Unmarshal(l, &tl); err != nil {
			return nil, fmt.Errorf("traces line %s: %w", l, err)
		}
		for _, rs := range tl.ResourceSpans {
			res := attributes(rs.Resource.Attributes)
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					sp := Span{TraceID: s.TraceID, SpanID: s.SpanID, ParentSpanID: s.ParentSpanID, Name: s.Name, Kind: s.Kind,
						Attributes: attributes(s.Attributes), StatusCode: s.Status.Code, StatusMessage: s.Status.Message,
						Resource: res, Scope: ss.Scope.Name}
					for _, lk := range s.Links {
						sp.Links = append(sp.Links, Link{TraceID: lk.TraceID, SpanID: lk.SpanID})
					}
					for _, e := range s.Events {
						sp.Events = append(sp.Events, Event{Name: e.Name, Attributes: attributes(e.Attributes)})
					}
					out = append(out, sp)
				}
			}
		}
	}
	return out, nil
}

type metricsLine struct {
	ResourceMetrics []struct {
		Resource     resource `json:"resource"`
		ScopeMetrics []struct {
			Metrics []struct {
				Name      string `json:"name"`
				Unit      string `json:"unit"`
				Histogram *struct {
					DataPoints []struct {
						Attributes     []keyValue `json:"attributes"`
						Count          jsonInt    `json:"count"`
						Sum            float64    `json:"sum"`
						ExplicitBounds []float64  `json:"explicitBounds"`
					} `json:"dataPoints"`
				} `json:"histogram"`
			} `json:"metrics"`
		} `json:"scopeMetrics"`
	} `json:"resourceMetrics"`
}

// Histograms returns every histogram data point received so far, in the
// order received (a cumulative metric's later points include earlier ones).
func (c *Collector) Histograms() ([]HistogramPoint, error) {
	lines, err := c.lines("metrics")
	if err != nil {
		return nil, err
	}
	var out []HistogramPoint
	for _, l := range lines {
		var ml metricsLine
		if err := json.Unmarshal(l, &ml); err != nil {
			return nil, fmt.Errorf("metrics line %s: %w", l, err)
		}
		for _, rm := range ml.ResourceMetrics {
			res := attributes(rm.Resource.Attributes)
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Histogram == nil {
						continue
					}
					for _, p := range m.Histogram.DataPoints {
						out = append(out, HistogramPoint{Metric: m.Name, Unit: m.Unit, Attributes: attributes(p.Attributes),
							Count: uint64(p.Count), Sum: p.Sum, Bounds: p.ExplicitBounds, Resource: res})
					}
				}
			}
		}
	}
	return out, nil
}

type logsLine struct {
	ResourceLogs []struct {
		Resource  resource `json:"resource"`
		ScopeLogs []struct {
			LogRecords []struct {
				Body           anyValue   `json:"body"`
				EventName      string     `json:"eventName"`
				SeverityNumber int        `json:"severityNumber"`
				SeverityText   string     `json:"severityText"`
				TraceID        string     `json:"traceId"`
				SpanID         string     `json:"spanId"`
				Attributes     []keyValue `json:"attributes"`
			} `json:"logRecords"`
		} `json:"scopeLogs"`
	} `json:"resourceLogs"`
}

// Logs returns every log record received so far.
func (c *Collector) Logs() ([]Log, error) {
	lines, err := c.lines("logs")
	if err != nil {
		return nil, err
	}
	var out []Log
	for _, l := range lines {
		var ll logsLine
		if err := json.Unmarshal(l, &ll); err != nil {
			return nil, fmt.Errorf("logs line %s: %w", l, err)
		}
		for _, rl := range ll.ResourceLogs {
			res := attributes(rl.Resource.Attributes)
			for _, sl := range rl.ScopeLogs {
				for _, r := range sl.LogRecords {
					out = append(out, Log{Body: r.Body.value(), EventName: r.EventName, SeverityNumber: r.SeverityNumber,
						SeverityText: r.SeverityText, TraceID: r.TraceID, SpanID: r.SpanID, Attributes: attributes(r.Attributes), Resource: res})
				}
			}
		}
	}
	return out, nil
}

// WaitSpans waits until done(spans) holds and returns the spans.
func (c *Collector) WaitSpans(t testing.TB, done func([]Span) bool) []Span {
	t.Helper()
	return waitFor(t, c, "spans", c.Spans, done)
}

// WaitHistograms waits until done(points) holds and returns the points.
func (c *Collector) WaitHistograms(t testing.TB, done func([]HistogramPoint) bool) []HistogramPoint {
	t.Helper()
	return waitFor(t, c, "histogram points", c.Histograms, done)
}

// WaitLogs waits until done(logs) holds and returns the log records.
func (c *Collector) WaitLogs(t testing.TB, done func([]Log) bool) []Log {
	t.Helper()
	return waitFor(t, c, "log records", c.Logs, done)
}
